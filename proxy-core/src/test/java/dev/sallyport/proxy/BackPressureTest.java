package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that stops reading a large response must stall the upstream, not make the proxy buffer the body: the
 * upstream here writes without blocking and reports how much it got out before TCP stopped taking more.
 */
class BackPressureTest {

    static final long BODY = 256L * 1024 * 1024;

    @Test
    void aClientThatStopsReadingStallsTheUpstreamInsteadOfFillingTheProxy() throws Exception {
        try (ServerSocketChannel upstream = ServerSocketChannel.open()) {
            upstream.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) upstream.getLocalAddress()).getPort();
            CompletableFuture<Long> sentWhenStalled = CompletableFuture.supplyAsync(() -> serve(upstream));
            try (ProxyFixture proxy = proxyTo(port); Socket client = get(proxy, port, 64 * 1024)) {
                InputStream in = client.getInputStream();
                byte[] first = in.readNBytes(1024);
                assertThat(new String(first, StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 200");
                // and now the client reads nothing more
                long sent = sentWhenStalled.get(60, TimeUnit.SECONDS);
                assertThat(sent).as("bytes the upstream got out before it stalled (-1: the whole body)")
                        .isBetween(0L, 32L * 1024 * 1024);
            }
        }
    }

    @Test
    void anUpstreamThatClosesRightAfterItsResponseDoesNotCutTheSlowClientsCopy() throws Exception {
        int size = 192 * 1024;
        try (ServerSocketChannel upstream = ServerSocketChannel.open()) {
            upstream.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) upstream.getLocalAddress()).getPort();
            CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> answerAndClose(upstream, size));
            try (ProxyFixture proxy = proxyTo(port); Socket client = get(proxy, port, 16 * 1024)) {
                closed.get(30, TimeUnit.SECONDS);   // the client has read nothing yet: the proxy holds the rest
                InputStream in = client.getInputStream();
                StringBuilder head = new StringBuilder();
                while (!head.toString().endsWith("\r\n\r\n")) {
                    int b = in.read();
                    assertThat(b).as("the response head ends before the connection does").isNotNegative();
                    head.append((char) b);
                }
                assertThat(head.toString()).startsWith("HTTP/1.1 200");
                // the client connection stays open (keep-alive toward the client): read exactly the body
                assertThat(in.readNBytes(size)).as("body bytes the client got").hasSize(size);
            }
        }
    }

    /** A proxy that allows big.test, resolved to the loopback upstream on {@code port}. */
    private static ProxyFixture proxyTo(int port) throws Exception {
        String rules = "  - name: big\n    hosts: [big.test]\n    ports: [" + port + "]\n";
        return ProxyFixture.start(ProxyFixture.policy(null, "127.0.0.1/32:" + port, "", rules),
                new MapResolver().map("big.test", "127.0.0.1"), ProxyFixture.tempDir());
    }

    /** A client with a small receive buffer that has sent one GET for big.test through {@code proxy}. */
    private static Socket get(ProxyFixture proxy, int port, int receiveBuffer) throws Exception {
        Socket client = new Socket();
        client.setReceiveBufferSize(receiveBuffer);
        client.connect(proxy.address(), 5_000);
        client.setSoTimeout(10_000);
        client.getOutputStream().write(("GET http://big.test:" + port + "/ HTTP/1.1\r\nHost: big.test:" + port
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return client;
    }

    /** Answers one request with a {@code size}-byte, connection-close response in one go, then closes. */
    private static void answerAndClose(ServerSocketChannel server, int size) {
        try (SocketChannel ch = server.accept()) {
            ByteBuffer request = ByteBuffer.allocate(8192);
            while (!new String(request.array(), 0, request.position(), StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
                if (ch.read(request) < 0) {
                    return;
                }
            }
            ByteBuffer head = ByteBuffer.wrap(("HTTP/1.1 200 OK\r\nContent-Length: " + size
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            ByteBuffer body = ByteBuffer.allocate(size);
            while (head.hasRemaining() || body.hasRemaining()) {
                ch.write(new ByteBuffer[] {head, body});
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Answers one request with a BODY-byte response; returns the bytes sent once writing stalls for 2 s, or -1. */
    private static long serve(ServerSocketChannel server) {
        try (SocketChannel ch = server.accept(); Selector selector = Selector.open()) {
            ByteBuffer request = ByteBuffer.allocate(8192);
            while (!new String(request.array(), 0, request.position(), StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
                if (ch.read(request) < 0) {
                    return -2;
                }
            }
            ch.write(ByteBuffer.wrap(("HTTP/1.1 200 OK\r\nContent-Length: " + BODY + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII)));
            ch.configureBlocking(false);
            ch.register(selector, SelectionKey.OP_WRITE);
            ByteBuffer chunk = ByteBuffer.allocateDirect(64 * 1024);
            long sent = 0;
            while (sent < BODY) {
                chunk.clear().limit((int) Math.min(chunk.capacity(), BODY - sent));
                int n = ch.write(chunk);
                sent += n;
                if (n == 0 && selector.select(2_000) == 0) {
                    return sent;        // not writable for 2 s: the proxy stopped taking bytes
                }
                selector.selectedKeys().clear();
            }
            return -1;
        } catch (Exception e) {
            return -3;
        }
    }
}
