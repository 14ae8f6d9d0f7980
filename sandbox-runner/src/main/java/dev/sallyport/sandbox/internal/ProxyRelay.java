package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
 * header that the relay writes before any byte of the sandbox's (so the sandbox cannot forge it). Anything else is
 * closed.
 */
public final class ProxyRelay implements AutoCloseable {

    /**
     * Where connections go: {@code explicit} the proxy's listener; with capture, {@code dns} its DNS stub's TCP
     * address and {@code transparent} its transparent listener (both null without capture); {@code token} the
     * sandbox's registration with a shared proxy (null: none), presented before every connection's first byte.
     */
    public record Targets(InetSocketAddress explicit, /* @Nullable */ InetSocketAddress dns,
                          /* @Nullable */ InetSocketAddress transparent, /* @Nullable */ String token) {
        public Targets(InetSocketAddress explicit) {
            this(explicit, null, null);
        }

        public Targets(InetSocketAddress explicit, InetSocketAddress dns, InetSocketAddress transparent) {
            this(explicit, dns, transparent, null);
        }

        /** The same targets, each connection presenting {@code value} (null: none). */
        public Targets withToken(/* @Nullable */ String value) {
            return new Targets(explicit, dns, transparent, value);
        }

        @Override
        public String toString() {
            return "Targets[" + explicit + ", " + dns + ", " + transparent + ", token=" + (token == null ? "none"
                    : "hidden") + "]";
        }

        boolean capture() {
            return dns != null && transparent != null;
        }
    }

    private static final int SYNTHETIC_BASE = (198 << 24) | (18 << 16);
    private static final int SYNTHETIC_MASK = 0xfffe0000;
    /** The first 96 bits of the proxy's IPv6 prefix ({@code fd5a:11b0:7f00:53::/96}). */
    private static final byte[] SYNTHETIC6 = {(byte) 0xfd, 0x5a, 0x11, (byte) 0xb0, 0x7f, 0x00, 0x00, 0x53, 0, 0, 0, 0};
    private static final byte[] PROXY_V2 = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
        0x21, 0x11, 0x00, 0x0c};
    private static final int DNS_PORT = 53;
    /** The PROXY v2 TLV type the proxy reads a registration's token from (its {@code SandboxRegistry.TLV_TYPE}). */
    static final int IDENTITY_TLV = 0xE1;

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
            header = targets.token() == null ? null : identity(targets.token());
        } else if (original.getAddress().isLoopbackAddress() && original.getPort() == DNS_PORT) {
            to = targets.dns();
        } else if (isSynthetic(original)) {
            to = targets.transparent();
            header = header(original, targets.token());
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

    /** PROXY v2, TCP over IPv4 or IPv6: the source (unknown here: all zeros, port 0) and the original destination. */
    static byte[] header(InetSocketAddress original) {
        return header(original, null);
    }

    /** The same, with the identity TLV of {@code token} when there is one. */
    static byte[] header(InetSocketAddress original, /* @Nullable */ String token) {
        byte[] tlv = tlv(token);
        byte[] destination = original.getAddress().getAddress();
        int addresses = 2 * destination.length + 4;
        ByteBuffer b = ByteBuffer.allocate(PROXY_V2.length + addresses + tlv.length);
        b.put(PROXY_V2, 0, PROXY_V2.length - 3).put((byte) (destination.length == 16 ? 0x21 : 0x11))
                .putShort((short) (addresses + tlv.length)).put(new byte[destination.length]).put(destination)
                .putShort((short) 0).putShort((short) original.getPort()).put(tlv);
        return b.array();
    }

    /**
     * PROXY v2 {@code LOCAL} with no addresses, only the identity TLV: what an explicit connection of a registered
     * sandbox begins with, written here before any byte of the sandbox's (so whatever it sends comes after, where
     * the proxy refuses another header as forged).
     */
    public static byte[] identity(String token) {
        byte[] tlv = tlv(token);
        ByteBuffer b = ByteBuffer.allocate(PROXY_V2.length + tlv.length);
        b.put(PROXY_V2, 0, 12).put((byte) 0x20).put((byte) 0x00).putShort((short) tlv.length).put(tlv);
        return b.array();
    }

    private static byte[] tlv(/* @Nullable */ String token) {
        if (token == null) {
            return new byte[0];
        }
        byte[] value = token.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(3 + value.length).put((byte) IDENTITY_TLV).putShort((short) value.length)
                .put(value).array();
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
