package dev.sallyport.cli;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A resolver that must not be asked: a UDP DNS server on {@code 127.0.0.1} (port 0: any) that records the name of
 * every query it gets and answers NXDOMAIN. The run's proxy asks it for the names it resolves for real
 * ({@link CanaryResolverProvider}); a test asserts which names never reached it.
 */
final class CanaryResolver implements AutoCloseable {
    private final DatagramSocket socket;
    private final List<String> asked = new CopyOnWriteArrayList<>();
    private final Thread thread;

    CanaryResolver() throws SocketException {
        socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        thread = Thread.ofPlatform().daemon().name("canary-resolver").start(this::serve);
    }

    int port() {
        return socket.getLocalPort();
    }

    /** The JVM option that makes a CLI JVM's resolver ask this one for names its hosts file does not have. */
    String jvmOption() {
        return "-D" + CanaryResolverProvider.PROPERTY + "=" + port();
    }

    /** The names asked so far, in order (lowercase, without the final dot). */
    List<String> asked() {
        return List.copyOf(asked);
    }

    private void serve() {
        byte[] buffer = new byte[4096];
        while (!socket.isClosed()) {
            DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(packet);
            } catch (IOException e) {
                return;
            }
            asked.add(name(buffer, packet.getLength()));
            if (packet.getLength() >= 12) {
                byte[] answer = java.util.Arrays.copyOf(buffer, packet.getLength());
                answer[2] = (byte) 0x81;            // a response, recursion desired
                answer[3] = (byte) 0x83;            // recursion available, NXDOMAIN
                try {
                    socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
                } catch (IOException e) {
                    return;
                }
            }
        }
    }

    /** The question's name of a query, or {@code ?} when the datagram has none. */
    private static String name(byte[] b, int length) {
        StringBuilder name = new StringBuilder();
        int i = 12;
        while (i < length && b[i] != 0 && i + 1 + b[i] <= length) {
            if (!name.isEmpty()) {
                name.append('.');
            }
            name.append(new String(b, i + 1, b[i], StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT));
            i += 1 + b[i];
        }
        return name.isEmpty() ? "?" : name.toString();
    }

    @Override
    public void close() {
        socket.close();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
