package dev.sallyport.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A stand-in for the real proxy in tests: answers {@code CONNECT host:port} by tunnelling to one fixed
 * loopback upstream (whatever host was named) and records the CONNECT targets.
 */
final class ConnectProxy implements AutoCloseable {
    final ServerSocket server;
    final ConcurrentLinkedQueue<String> connects = new ConcurrentLinkedQueue<>();
    private final InetSocketAddress upstream;

    ConnectProxy(InetSocketAddress upstream) throws IOException {
        this.upstream = upstream;
        this.server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::acceptLoop);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Thread.ofVirtual().start(() -> handle(client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void handle(Socket client) {
        try (client) {
            String head = readHead(client.getInputStream());
            String[] first = head.split("\r\n", 2)[0].split(" ");
            if (first.length < 2 || !first[0].equals("CONNECT")) {
                client.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                return;
            }
            connects.add(first[1]);
            try (Socket up = new Socket()) {
                up.connect(upstream, 10_000);
                client.getOutputStream().write("HTTP/1.1 200 Connection established\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                Thread t = Thread.ofVirtual().start(() -> copy(up, client));
                copy(client, up);
                t.join(30_000);
            }
        } catch (IOException | InterruptedException e) {
            // the client or upstream went away
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (head.size() < 16_384) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                break;
            }
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    private static void copy(Socket from, Socket to) {
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            in.transferTo(out);
            to.shutdownOutput();
        } catch (IOException ignored) {
            // one side closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
