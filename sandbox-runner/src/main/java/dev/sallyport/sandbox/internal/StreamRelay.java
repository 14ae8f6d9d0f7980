package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One listening TCP socket on the host whose every connection is relayed to the proxy: each accepted connection (a
 * raw descriptor, so the kernel can say who sent it and where it was headed before a redirect or DNAT rewrote it) is
 * given to a {@link Route}, which names where it goes and what the relay writes there first (a {@code RelayHeader},
 * before any byte of the sandbox's, so the sandbox cannot forge it); then {@link Pump} copies both ways. A
 * connection the route refuses is closed unanswered. The accepting thread owns the listener and closes it;
 * {@link #close()} wakes it and ends every connection in flight.
 *
 * <p>Two relays stand on it: the process sandbox's {@link ProxyRelay} (its listener made inside the sandbox and
 * handed over) and the VM bridge's gateway relay ({@code vm.GatewayRelay}, its listeners bound here with
 * {@link #listen}).
 */
public final class StreamRelay implements AutoCloseable {

    /** Where one connection goes: {@code to}, with {@code header} written first (null: nothing). */
    public record Target(InetSocketAddress to, /* @Nullable */ byte[] header) {
        public Target {
            java.util.Objects.requireNonNull(to, "to");
            header = header == null ? null : header.clone();
        }

        @Override
        public String toString() {
            return "Target[" + to + (header == null ? "" : ", header of " + header.length + " bytes") + "]";
        }
    }

    /** An accepted connection as the kernel sees it; valid only while {@link Route#route} runs. */
    public static final class Accepted {
        private final int fd;

        private Accepted(int fd) {
            this.fd = fd;
        }

        /** Who connected; null when the kernel cannot say (the peer is already gone). */
        public /* @Nullable */ InetSocketAddress peer() {
            return Sockets.peerAddress(fd);
        }

        /**
         * Where the connection was headed before the host's (or the sandbox namespace's) nftables rewrote its
         * destination, from connection tracking (the client cannot forge it); the listener's own address when
         * nothing rewrote it; null when the kernel tracks no connection for it.
         */
        public /* @Nullable */ InetSocketAddress originalDestination() {
            return Sockets.originalDestination(fd);
        }
    }

    /** Decides each connection. */
    @FunctionalInterface
    public interface Route {
        /** Where {@code connection} goes; null: it is closed unanswered. */
        /* @Nullable */ Target route(Accepted connection);
    }

    private final OwnedSocket listener;
    private final Route route;
    private final Set<Pump> pumps = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private StreamRelay(int listener, Route route) {
        this.listener = new OwnedSocket(listener);
        this.route = route;
    }

    /** Takes ownership of the listening socket {@code listener} and relays its connections until {@link #close()}. */
    static StreamRelay start(int listener, String name, Route route) {
        StreamRelay relay = new StreamRelay(listener, route);
        Thread.ofPlatform().daemon().name(name).start(relay::accept);
        return relay;
    }

    /** Listens on the IPv4 address {@code at} and relays its connections until {@link #close()}. */
    public static StreamRelay listen(InetSocketAddress at, String name, Route route) throws IOException {
        return start(Sockets.tcpListener(at, 128), name, route);
    }

    private void accept() {
        try {
            while (!closed) {
                int accepted;
                try {
                    accepted = Sockets.accept(listener.fd());
                } catch (IOException e) {
                    return;
                }
                Thread.ofPlatform().daemon().name("sallyport-relay-dial").stackSize(Pump.STACK)
                        .start(() -> dial(accepted));
            }
        } finally {
            // Closed here, by the only thread that uses it: a number closed elsewhere could be reused under it.
            listener.close();
        }
    }

    private void dial(int accepted) {
        Target target;
        try {
            target = closed ? null : route.route(new Accepted(accepted));
        } catch (RuntimeException e) {
            target = null;                  // a route that cannot decide refuses
        }
        if (target == null) {
            Sockets.close(accepted);
            return;
        }
        SocketChannel upstream;
        try {
            upstream = SocketChannel.open(target.to());
        } catch (IOException e) {
            Sockets.close(accepted);        // the proxy is not there: the sandbox sees the close
            return;
        }
        try {
            if (target.header != null) {
                ByteBuffer b = ByteBuffer.wrap(target.header);
                while (b.hasRemaining()) {
                    upstream.write(b);
                }
            }
        } catch (IOException e) {
            Sockets.close(accepted);
            closeQuietly(upstream);
            return;
        }
        Pump pump = new Pump(accepted, upstream, pumps::remove);
        pumps.add(pump);
        if (closed) {
            pump.abort();
        }
        pump.start();
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing on an error path: nothing else to release
        }
    }

    /** Stops accepting and ends every connection in flight. */
    @Override
    public void close() {
        closed = true;
        listener.shutdown();
        pumps.forEach(Pump::abort);
    }
}
