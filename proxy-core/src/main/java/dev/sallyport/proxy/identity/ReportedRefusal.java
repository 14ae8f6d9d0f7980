package dev.sallyport.proxy.identity;

import io.netty.util.NetUtil;
import java.util.Set;

/**
 * An attempt a registered sandbox's runner refused on the host, before any byte reached the proxy, and reports so
 * that it is audited with the sandbox's identity: the VM backend's host table dropped packets from the sandbox's
 * bridge whose source was not the guest's address ({@link #SPOOFED_SOURCE}), or the relay on its gateway was
 * reached from an address other than the guest's ({@link #WRONG_RELAY_PEER}). The runner reports each source once.
 *
 * @param identity the registered sandbox the report came for (its token checked)
 * @param source   the source address of the refused packets or connection (an IP literal, never a name)
 * @param reason   one of {@link #REASONS}
 */
public record ReportedRefusal(String identity, String source, String reason) {

    /** Packets from the sandbox's bridge with another source address: dropped by the host table. */
    public static final String SPOOFED_SOURCE = "spoofed_source";
    /** A connection to the sandbox's gateway relay from an address that is not the guest's: closed by the relay. */
    public static final String WRONG_RELAY_PEER = "wrong_relay_peer";
    /** Every reason a runner may report. */
    public static final Set<String> REASONS = Set.of(SPOOFED_SOURCE, WRONG_RELAY_PEER);

    public ReportedRefusal {
        if (!REASONS.contains(reason)) {
            throw new IllegalArgumentException("reason: '" + printable(reason) + "' (expected: one of " + SPOOFED_SOURCE
                    + ", " + WRONG_RELAY_PEER + ")");
        }
        if (!NetUtil.isValidIpV4Address(source) && !NetUtil.isValidIpV6Address(source)) {
            throw new IllegalArgumentException("source: '" + printable(source) + "' (expected: an IPv4 or IPv6 address)");
        }
    }

    /** {@code text} with every character outside printable ASCII as '?': the refusal stays one line. */
    private static String printable(String text) {
        return text.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
