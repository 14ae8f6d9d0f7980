package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * Inside the sandbox: listens on {@code 127.0.0.1:PORT} of the sandbox's own network namespace and forwards
 * each connection to the host's {@link ProxyRelay} through the bind-mounted Unix socket.
 */
final class Forwarder {
    private Forwarder() {
    }

    static void start(int port, Path socket) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.INET);
        server.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), port), 128);
        UnixDomainSocketAddress target = UnixDomainSocketAddress.of(socket);
        Thread.ofPlatform().daemon().name("sallyport-forwarder").start(() -> {
            while (server.isOpen()) {
                try {
                    SocketChannel client = server.accept();
                    try {
                        Pump.start(client, SocketChannel.open(target));
                    } catch (IOException e) {
                        Pump.closeQuietly(client);
                    }
                } catch (IOException e) {
                    return;
                }
            }
        });
    }
}
