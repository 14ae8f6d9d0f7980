package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sandbox's only way out, run on the host: accepts on the sandbox's own listening socket (created inside,
 * in the sandbox's network namespace, and handed over by {@link HostLink}) and relays every connection to the
 * proxy's TCP address on the host's loopback. Nothing of ours listens or forwards inside the sandbox.
 */
public final class ProxyRelay implements AutoCloseable {
    private final int listener;
    private final InetSocketAddress proxy;
    private final Set<Pump> pumps = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private ProxyRelay(int listener, InetSocketAddress proxy) {
        this.listener = listener;
        this.proxy = proxy;
    }

    /** Takes ownership of {@code listener} and accepts on it until {@link #close()}. */
    static ProxyRelay start(int listener, InetSocketAddress proxy) {
        ProxyRelay relay = new ProxyRelay(listener, proxy);
        Thread.ofPlatform().daemon().name("sallyport-sandbox-relay").start(relay::accept);
        return relay;
    }

    private void accept() {
        try {
            acceptUntilClosed();
        } finally {
            // Closed here, by the only thread that uses it: a number closed elsewhere could be reused under it.
            Sockets.close(listener);
        }
    }

    private void acceptUntilClosed() {
        while (!closed) {
            int inside;
            try {
                inside = Sockets.accept(listener);
            } catch (IOException e) {
                return;
            }
            Thread.ofPlatform().daemon().name("sallyport-relay-dial").stackSize(Pump.STACK).start(() -> {
                SocketChannel upstream;
                try {
                    upstream = SocketChannel.open(proxy);
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
            });
        }
    }

    @Override
    public void close() {
        closed = true;
        Sockets.shutdown(listener, Sockets.SHUT_RDWR);
        pumps.forEach(Pump::abort);
    }
}
