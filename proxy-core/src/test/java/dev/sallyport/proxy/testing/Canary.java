package dev.sallyport.proxy.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A listener that only counts the connections it gets: a place the proxy must never dial. Binds where it can
 * ({@link #tryBind} gives null for an address that is not local, e.g. a metadata address outside a network
 * namespace that put it on {@code lo}).
 */
public final class Canary implements AutoCloseable {

    private final ServerSocket server;
    private final Thread acceptor;
    private final AtomicInteger connections = new AtomicInteger();

    private Canary(ServerSocket server) {
        this.server = server;
        this.acceptor = Thread.ofVirtual().name("canary-" + server.getLocalSocketAddress()).start(this::accept);
    }

    /** A canary on {@code address:port} (port 0: any); throws if it cannot bind. */
    public static Canary bind(InetAddress address, int port) {
        Canary c = tryBind(address, port);
        if (c == null) {
            throw new IllegalStateException("cannot bind a canary on " + address + ":" + port);
        }
        return c;
    }

    /** A canary on {@code address:port}, or null when that address is not one of this host's (or the port is taken). */
    public static Canary tryBind(InetAddress address, int port) {
        ServerSocket s = null;
        try {
            s = new ServerSocket();
            s.bind(new InetSocketAddress(address, port), 50);
            return new Canary(s);
        } catch (BindException e) {
            closeQuietly(s);
            return null;
        } catch (IOException e) {
            closeQuietly(s);
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connections() {
        return connections.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try (Socket _ = server.accept()) {
                connections.incrementAndGet();
            } catch (IOException e) {
                return;
            }
        }
    }

    @Override
    public void close() {
        closeQuietly(server);
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(ServerSocket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
