package dev.sallyport.sandbox.vm;

import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.proxy.identity.RelayHeader;
import dev.sallyport.sandbox.internal.DnsDatagramRelay;
import dev.sallyport.sandbox.internal.ProxyRelay;
import dev.sallyport.sandbox.internal.RelayBudget;
import dev.sallyport.sandbox.internal.StreamRelay;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.LoggerFactory;

/**
 * What a VM sandbox attached to a shared proxy finds on its bridge's gateway instead of a proxy of its own: a relay
 * on the gateway's three ports that takes connections from the guest's address only ({@link SandboxNetwork#guest()},
 * which the host table makes the only source the bridge may send) and carries each to the shared proxy's main
 * listener behind the sandbox's identity: a PROXY v2 header with the registration's token ({@link RelayHeader}, the
 * one the process backend's relay writes), written before any byte of the guest's, so the token never enters the
 * guest and a header the guest sends comes after it, where the proxy refuses it as forged.
 *
 * <ul>
 *   <li>the proxy port: the guest's explicit proxy connections ({@link RelayHeader#explicit});</li>
 *   <li>the transparent port, where the host table DNATs the guest's TCP to a synthetic address (with
 *       {@code network.literal_addresses: capture}, to any address but the gateway's): the original destination is
 *       read from the host's connection tracking ({@code SO_ORIGINAL_DST} on the accepted socket) and sent in the
 *       header ({@link RelayHeader#transparent}); the proxy maps a synthetic address back to the name it gave this
 *       sandbox. A connection whose original destination is the gateway itself, or (without literal capture) not a
 *       synthetic address, is closed: the table sends no such connection here;</li>
 *   <li>the DNS port, where the table DNATs the guest's port 53: DNS over TCP is carried as it is, and each question
 *       over UDP goes through {@link DnsDatagramRelay} as DNS over TCP, both behind {@link RelayHeader#dns} (no AAAA:
 *       the bridge carries no IPv6), so every name is decided as this sandbox's.</li>
 * </ul>
 * A connection from any other address (the table lets none in from the bridge; a process on the host reaching the
 * gateway over loopback would be one) is closed, a question over UDP from one is answered {@code REFUSED}, and each
 * such address is reported once to {@code strangers} for the audit log. The copying is the process backend's
 * ({@link StreamRelay}, raw descriptors so the kernel can be asked about each connection).
 */
public final class GatewayRelay implements AutoCloseable {

    /** Distinct strangers reported at most (each once); more are still refused. */
    static final int MAX_REPORTED = 256;

    private final InetAddress guest;
    private final InetAddress gateway;
    private final InetSocketAddress proxy;
    private final String token;
    private final LiteralAddresses literals;
    private final Consumer<String> strangers;
    private final List<AutoCloseable> relays = new ArrayList<>();
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    /** The guest's connections in flight on the host, over all three ports (its task limit is the guest kernel's). */
    private final RelayBudget budget = RelayBudget.forTasks(0, limit -> LoggerFactory.getLogger(GatewayRelay.class)
            .warn("gateway relay: the guest holds {} connections at once, its most; more are closed until some end",
                    limit));

    private GatewayRelay(SandboxNetwork network, InetSocketAddress proxy, String token, Consumer<String> strangers) {
        this.guest = InetAddress.ofLiteral(network.guest());
        this.gateway = InetAddress.ofLiteral(network.gateway());
        this.proxy = proxy;
        this.token = token;
        this.literals = network.literals();
        this.strangers = strangers;
    }

    /**
     * Binds the gateway's proxy, transparent and DNS ports (TCP, and UDP for DNS) on {@code network} and relays what
     * the guest sends there to {@code proxy} with {@code token}; a connection or question from an address other than
     * the guest's is refused and its address given to {@code strangers} (once each). Without capture
     * ({@link SandboxNetwork#capture()}) only the proxy port is bound.
     */
    public static GatewayRelay start(SandboxNetwork network, InetSocketAddress proxy, String token,
                                     Consumer<String> strangers) throws IOException {
        GatewayRelay relay = new GatewayRelay(network, proxy, token, strangers);
        try {
            relay.relays.add(StreamRelay.listen(relay.at(network.proxyPort()), "sallyport-gateway-relay",
                    relay::explicit, relay.budget));
            if (!network.capture()) {
                return relay;
            }
            relay.relays.add(StreamRelay.listen(relay.at(network.transparentPort()), "sallyport-gateway-transparent",
                    relay::transparent, relay.budget));
            relay.relays.add(StreamRelay.listen(relay.at(network.dnsPort()), "sallyport-gateway-dns-tcp",
                    relay::dns, relay.budget));
            relay.relays.add(DnsDatagramRelay.listen(relay.at(network.dnsPort()), proxy, RelayHeader.dns(token, false),
                    relay.guest, stranger -> relay.report(stranger)));
        } catch (IOException e) {
            relay.close();
            throw e;
        }
        return relay;
    }

    private InetSocketAddress at(int port) {
        return new InetSocketAddress(gateway, port);
    }

    private StreamRelay.Target explicit(StreamRelay.Accepted connection) {
        return fromGuest(connection) ? new StreamRelay.Target(proxy, RelayHeader.explicit(token)) : null;
    }

    private StreamRelay.Target transparent(StreamRelay.Accepted connection) {
        if (!fromGuest(connection)) {
            return null;
        }
        InetSocketAddress original = connection.originalDestination();
        if (original == null || original.getAddress().equals(gateway)
                || !(ProxyRelay.isSynthetic(original) || literals == LiteralAddresses.CAPTURE)) {
            return null;                // not DNATed here by the table: the gateway's own ports stay closed
        }
        return new StreamRelay.Target(proxy, RelayHeader.transparent(original, token));
    }

    private StreamRelay.Target dns(StreamRelay.Accepted connection) {
        return fromGuest(connection) ? new StreamRelay.Target(proxy, RelayHeader.dns(token, false)) : null;
    }

    /** Whether the guest sent {@code connection}; if not, its source is reported. */
    private boolean fromGuest(StreamRelay.Accepted connection) {
        InetSocketAddress peer = connection.peer();
        if (peer != null && guest.equals(peer.getAddress())) {
            return true;
        }
        if (peer != null) {
            report(peer.getAddress());
        }
        return false;
    }

    private void report(InetAddress stranger) {
        String address = stranger.getHostAddress();
        if (reported.size() < MAX_REPORTED && reported.add(address)) {
            strangers.accept(address);
        }
    }

    /** Stops listening and ends every connection in flight. */
    @Override
    public void close() {
        for (AutoCloseable relay : relays) {
            try {
                relay.close();
            } catch (Exception e) {
                // each relay's close only wakes its threads: nothing else to release
            }
        }
    }

    @Override
    public String toString() {
        return "GatewayRelay[guest " + guest.getHostAddress() + " -> " + proxy + ", token=hidden]";
    }
}
