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
 * {@link #close()} wakes it and ends every connection in flight. Every connection takes a share of its sandbox's
 * {@link RelayBudget} before anything else, and one over it is closed at once; an {@code accept} short of
 * descriptors or memory is tried again a moment later (the listener stays).
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

    /** How long an {@code accept} short of descriptors or memory waits before it tries again. */
    private static final long SHORT_OF_RESOURCES_PAUSE_MILLIS = 100;

    private final OwnedSocket listener;
    private final Route route;
    private final RelayBudget budget;
    private final Set<Pump> pumps = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private StreamRelay(int listener, Route route, RelayBudget budget) {
        this.listener = new OwnedSocket(listener);
        this.route = route;
        this.budget = java.util.Objects.requireNonNull(budget, "budget");
    }

    /**
     * Takes ownership of the listening socket {@code listener} and relays its connections until {@link #close()},
     * each taking a share of {@code budget}.
     */
    static StreamRelay start(int listener, String name, Route route, RelayBudget budget) {
        StreamRelay relay = new StreamRelay(listener, route, budget);
        Thread.ofPlatform().daemon().name(name).start(relay::accept);
        return relay;
    }

    /** Listens on the IPv4 address {@code at} and relays its connections until {@link #close()}. */
    public static StreamRelay listen(InetSocketAddress at, String name, Route route, RelayBudget budget)
            throws IOException {
        return start(Sockets.tcpListener(at, 128), name, route, budget);
    }

    private void accept() {
        try {
            while (!closed) {
                int accepted;
                try {
                    accepted = Sockets.accept(listener.fd());
                } catch (Sockets.ShortOfResources e) {
                    if (!pause()) {
                        return;
                    }
                    continue;               // the listener is fine: the connection waits in its backlog
                } catch (IOException e) {
                    return;
                }
                if (!budget.take()) {
                    Sockets.close(accepted);    // over the sandbox's budget: closed at once, costing no thread
                    continue;
                }
                try {
                    Thread.ofPlatform().daemon().name("sallyport-relay-dial").stackSize(Pump.STACK)
                            .start(() -> dial(accepted));
                } catch (OutOfMemoryError e) {  // no thread to be had: the host is short, not this listener
                    Sockets.close(accepted);
                    budget.give();
                    if (!pause()) {
                        return;
                    }
                }
            }
        } finally {
            // Closed here, by the only thread that uses it: a number closed elsewhere could be reused under it.
            listener.close();
        }
    }

    /** Waits a moment before the next {@code accept}; false when interrupted. */
    private static boolean pause() {
        try {
            Thread.sleep(SHORT_OF_RESOURCES_PAUSE_MILLIS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void dial(int accepted) {
        boolean pumping = false;
        try {
            pumping = relay(accepted);
        } finally {
            if (!pumping) {
                budget.give();
            }
        }
    }

    /** Routes and dials {@code accepted}; true when a pump now carries it (and gives the budget back at its end). */
    private boolean relay(int accepted) {
        Target target;
        try {
            target = closed ? null : route.route(new Accepted(accepted));
        } catch (RuntimeException e) {
            target = null;                  // a route that cannot decide refuses
        }
        if (target == null) {
            Sockets.close(accepted);
            return false;
        }
        SocketChannel upstream;
        try {
            upstream = SocketChannel.open(target.to());
        } catch (IOException e) {
            Sockets.close(accepted);        // the proxy is not there: the sandbox sees the close
            return false;
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
            return false;
        }
        Pump pump = new Pump(accepted, upstream, ended -> {
            pumps.remove(ended);
            budget.give();
        });
        pumps.add(pump);
        if (closed) {
            pump.abort();
        }
        pump.start();
        return true;
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
