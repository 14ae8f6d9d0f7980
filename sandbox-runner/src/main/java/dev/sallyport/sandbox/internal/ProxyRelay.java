package dev.sallyport.sandbox.internal;

import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.proxy.identity.RelayHeader;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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

    private final OwnedSocket listener;
    private final OwnedSocket listener6;   // null: none
    private final int insidePort;
    private final Targets targets;
    private final Set<Pump> pumps = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private ProxyRelay(int listener, int listener6, int insidePort, Targets targets) {
        this.listener = new OwnedSocket(listener);
        this.listener6 = listener6 >= 0 ? new OwnedSocket(listener6) : null;
        this.insidePort = insidePort;
        this.targets = targets;
    }

    /** Takes ownership of {@code listener} (bound to {@code insidePort}) and accepts on it until {@link #close()}. */
    static ProxyRelay start(int listener, int insidePort, Targets targets) {
        return start(listener, -1, insidePort, targets);
    }

    /** The same, with the sandbox's listener on {@code [::1]:insidePort} too ({@code listener6}; -1: none). */
    static ProxyRelay start(int listener, int listener6, int insidePort, Targets targets) {
        ProxyRelay relay = new ProxyRelay(listener, listener6, insidePort, targets);
        Thread.ofPlatform().daemon().name("sallyport-sandbox-relay").start(() -> relay.accept(relay.listener));
        if (relay.listener6 != null) {
            Thread.ofPlatform().daemon().name("sallyport-sandbox-relay6").start(() -> relay.accept(relay.listener6));
        }
        return relay;
    }

    private void accept(OwnedSocket on) {
        try {
            acceptUntilClosed(on);
        } finally {
            // Closed here, by the only thread that uses it: a number closed elsewhere could be reused under it.
            on.close();
        }
    }

    private void acceptUntilClosed(OwnedSocket listener) {
        while (!closed) {
            int inside;
            try {
                inside = Sockets.accept(listener.fd());
            } catch (IOException e) {
                return;
            }
            Thread.ofPlatform().daemon().name("sallyport-relay-dial").stackSize(Pump.STACK).start(() -> dial(inside));
        }
    }

    private void dial(int inside) {
        InetSocketAddress original = targets.capture() ? Sockets.originalDestination(inside) : null;
        InetSocketAddress to;
        byte[] header = null;
        if (original == null || (original.getAddress().isLoopbackAddress() && original.getPort() == insidePort)) {
            to = targets.explicit();
            header = targets.token() == null ? null : RelayHeader.explicit(targets.token());
        } else if (original.getAddress().isLoopbackAddress() && original.getPort() == DNS_PORT) {
            to = targets.dns();
            header = targets.dnsHeader();
        } else if (isSynthetic(original) || (targets.literals() == LiteralAddresses.CAPTURE
                && !original.getAddress().isLoopbackAddress())) {
            to = targets.transparent();
            header = RelayHeader.transparent(original, targets.token());
        } else {
            Sockets.close(inside);        // not a destination the sandbox's rules send here
            return;
        }
        SocketChannel upstream;
        try {
            upstream = SocketChannel.open(to);
            if (header != null) {
                ByteBuffer b = ByteBuffer.wrap(header);
                while (b.hasRemaining()) {
                    upstream.write(b);
                }
            }
        } catch (IOException e) {
            Sockets.close(inside);
            return;
        }
        Pump pump = new Pump(inside, upstream, pumps::remove);
        pumps.add(pump);
        if (closed) {
            pump.abort();
        }
        pump.start();
    }

    private static boolean isSynthetic(InetSocketAddress address) {
        byte[] b = address.getAddress().getAddress();
        if (address.getAddress() instanceof Inet6Address) {
            return Arrays.equals(b, 0, SYNTHETIC6.length, SYNTHETIC6, 0, SYNTHETIC6.length);
        }
        int v = ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
        return (v & SYNTHETIC_MASK) == SYNTHETIC_BASE;
    }

    @Override
    public void close() {
        closed = true;
        listener.shutdown();
        if (listener6 != null) {
            listener6.shutdown();
        }
        pumps.forEach(Pump::abort);
    }
}
