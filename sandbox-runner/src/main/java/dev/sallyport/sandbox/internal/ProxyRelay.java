package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * Host side of the sandbox's only way out: listens on a Unix socket (bind-mounted into the sandbox) and relays
 * every connection to the proxy's TCP address on the host's loopback.
 */
public final class ProxyRelay implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Thread acceptor;

    private ProxyRelay(ServerSocketChannel server, InetSocketAddress proxy) {
        this.server = server;
        this.acceptor = Thread.ofPlatform().daemon().name("sallyport-sandbox-relay").start(() -> accept(proxy));
    }

    public static ProxyRelay start(Path socket, InetSocketAddress proxy) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        return new ProxyRelay(server, proxy);
    }

    private void accept(InetSocketAddress proxy) {
        while (server.isOpen()) {
            SocketChannel inside;
            try {
                inside = server.accept();
            } catch (IOException e) {
                return;
            }
            Thread.ofVirtual().name("sallyport-relay-dial").start(() -> {
                try {
                    Pump.start(inside, SocketChannel.open(proxy));
                } catch (IOException e) {
                    Pump.closeQuietly(inside);
                }
            });
        }
    }

    @Override
    public void close() {
        Pump.closeQuietly(server);
        acceptor.interrupt();
    }
}
