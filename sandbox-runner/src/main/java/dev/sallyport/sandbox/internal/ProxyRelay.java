package dev.sallyport.sandbox.internal;

import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.proxy.identity.RelayHeader;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Objects;

/**
 * The sandbox's only way out, run on the host: accepts on the sandbox's own listening socket (created inside,
 * in the sandbox's network namespace, and handed over by {@link HostLink}) and relays every connection to the
 * proxy on the host's loopback. Nothing of ours listens or forwards inside the sandbox.
 *
 * <p>With transparent capture, the sandbox's nftables redirect every TCP connection to a synthetic address
 * ({@code 198.18.0.0/15}) and to port 53 of its loopback to this same socket (and every TCP connection to the IPv6
 * prefix, {@code fd5a:11b0:7f00:53::/96}, to its twin on {@code [::1]}); the kernel's connection tracking says
 * where each was headed ({@link Sockets#originalDestination}): the listener itself is the explicit proxy, port 53 is
 * the proxy's DNS stub (over TCP), a synthetic address goes to the proxy's transparent listener behind a PROXY v2
 * header that the relay writes before any byte of the sandbox's (so the sandbox cannot forge it), and so does any
 * other address but the loopback's when the rules capture literal addresses ({@link LiteralAddresses#CAPTURE}).
 * Anything else is closed.
 *
 * <p>Attached to a shared proxy (a registration's token), every connection goes to the proxy's main listener, each
 * behind the {@link RelayHeader} of its kind with the token: explicit, DNS, or transparent with its original
 * destination; the proxy decides each as the sandbox's.
 */
public final class ProxyRelay implements AutoCloseable {

    /**
     * Where connections go: {@code explicit} the proxy's listener; with capture, {@code dns} its DNS stub's TCP
     * address and {@code transparent} its transparent listener (both null without capture); {@code token} the
     * sandbox's registration with a shared proxy (null: none), presented before every connection's first byte;
     * {@code families} what the sandbox's network namespace captures (its DNS header tells a shared proxy whether to
     * answer AAAA questions).
     */
    public record Targets(InetSocketAddress explicit, /* @Nullable */ InetSocketAddress dns,
                          /* @Nullable */ InetSocketAddress transparent, /* @Nullable */ String token,
                          LiteralAddresses literals, CaptureRules.Families families) {
        public Targets {
            Objects.requireNonNull(literals, "literals");
            Objects.requireNonNull(families, "families");
        }

        public Targets(InetSocketAddress explicit) {
            this(explicit, null, null);
        }

        public Targets(InetSocketAddress explicit, InetSocketAddress dns, InetSocketAddress transparent) {
            this(explicit, dns, transparent, null);
        }

        public Targets(InetSocketAddress explicit, /* @Nullable */ InetSocketAddress dns,
                       /* @Nullable */ InetSocketAddress transparent, /* @Nullable */ String token) {
            this(explicit, dns, transparent, token, LiteralAddresses.NO_ROUTE, CaptureRules.Families.IPV4);
        }

        /** The same targets, each connection presenting {@code value} (null: none). */
        public Targets withToken(/* @Nullable */ String value) {
            return new Targets(explicit, dns, transparent, value, literals, families);
        }

        /**
         * The same targets, literal addresses sent to the transparent listener too when {@code value} is
         * {@link LiteralAddresses#CAPTURE} (the sandbox's rules then redirect them).
         */
        public Targets withLiterals(LiteralAddresses value) {
            return new Targets(explicit, dns, transparent, token, value, families);
        }

        /** The same targets for a sandbox whose network namespace captures {@code value}. */
        public Targets withFamilies(CaptureRules.Families value) {
            return new Targets(explicit, dns, transparent, token, literals, value);
        }

        @Override
        public String toString() {
            return "Targets[" + explicit + ", " + dns + ", " + transparent + ", token=" + (token == null ? "none"
                    : "hidden") + ", " + literals + ", " + families + "]";
        }

        boolean capture() {
            return dns != null && transparent != null;
        }

        /** What a DNS connection to {@link #dns} begins with: the token's DNS header when attached, else nothing. */
        /* @Nullable */ byte[] dnsHeader() {
            return token == null ? null : RelayHeader.dns(token, families == CaptureRules.Families.IPV4_AND_IPV6);
        }
    }

    private static final int SYNTHETIC_BASE = (198 << 24) | (18 << 16);
    private static final int SYNTHETIC_MASK = 0xfffe0000;
    /** The first 96 bits of the proxy's IPv6 prefix ({@code fd5a:11b0:7f00:53::/96}). */
    private static final byte[] SYNTHETIC6 = {(byte) 0xfd, 0x5a, 0x11, (byte) 0xb0, 0x7f, 0x00, 0x00, 0x53, 0, 0, 0, 0};
    private static final int DNS_PORT = 53;

    private final StreamRelay relay;
    private final StreamRelay relay6;   // null: none

    private ProxyRelay(StreamRelay relay, /* @Nullable */ StreamRelay relay6) {
        this.relay = relay;
        this.relay6 = relay6;
    }

    /** Takes ownership of {@code listener} (bound to {@code insidePort}) and accepts on it until {@link #close()}. */
    static ProxyRelay start(int listener, int insidePort, Targets targets) {
        return start(listener, -1, insidePort, targets, RelayBudget.unknownTasks());
    }

    /**
     * The same, with the sandbox's listener on {@code [::1]:insidePort} too ({@code listener6}; -1: none), both
     * taking from the sandbox's {@code budget}.
     */
    static ProxyRelay start(int listener, int listener6, int insidePort, Targets targets, RelayBudget budget) {
        StreamRelay.Route route = inside -> route(inside, insidePort, targets);
        return new ProxyRelay(StreamRelay.start(listener, "sallyport-sandbox-relay", route, budget),
                listener6 >= 0 ? StreamRelay.start(listener6, "sallyport-sandbox-relay6", route, budget) : null);
    }

    private static StreamRelay.Target route(StreamRelay.Accepted inside, int insidePort, Targets targets) {
        InetSocketAddress original = targets.capture() ? inside.originalDestination() : null;
        if (original == null || (original.getAddress().isLoopbackAddress() && original.getPort() == insidePort)) {
            return new StreamRelay.Target(targets.explicit(),
                    targets.token() == null ? null : RelayHeader.explicit(targets.token()));
        }
        if (original.getAddress().isLoopbackAddress() && original.getPort() == DNS_PORT) {
            return new StreamRelay.Target(targets.dns(), targets.dnsHeader());
        }
        if (isSynthetic(original) || (targets.literals() == LiteralAddresses.CAPTURE
                && !original.getAddress().isLoopbackAddress())) {
            return new StreamRelay.Target(targets.transparent(), RelayHeader.transparent(original, targets.token()));
        }
        return null;                        // not a destination the sandbox's rules send here
    }

    /** Whether {@code address} is one of the proxy's synthetic addresses (IPv4 or IPv6). */
    public static boolean isSynthetic(InetSocketAddress address) {
        byte[] b = address.getAddress().getAddress();
        if (address.getAddress() instanceof Inet6Address) {
            return Arrays.equals(b, 0, SYNTHETIC6.length, SYNTHETIC6, 0, SYNTHETIC6.length);
        }
        int v = ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
        return (v & SYNTHETIC_MASK) == SYNTHETIC_BASE;
    }

    @Override
    public void close() {
        relay.close();
        if (relay6 != null) {
            relay6.close();
        }
    }
}
