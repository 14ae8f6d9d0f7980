package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Injected fault: the upstream resets its connection (RST) in the middle of a chunked response, after the head and
 * two chunks. The client gets what was sent and then a closed connection, never the last chunk that would make the
 * cut body look complete; the exchange's audit record says the upstream failed and counts only the bytes sent.
 */
class UpstreamResetMidResponseTest {

    @Test
    void aResetMidResponseClosesTheClientWithoutALastChunkAndTheAuditSaysWhy() throws Exception {
        try (ServerSocket upstream = new ServerSocket(0, 10, InetAddress.getByName("127.0.0.1"))) {
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> resetMidResponse(upstream));
            String target = "reset.test:" + upstream.getLocalPort();
            String yaml = ProxyFixture.policy(null, target, "", "  - name: reset\n    hosts: [reset.test]\n    ports: ["
                    + upstream.getLocalPort() + "]\n");
            try (ProxyFixture proxy = ProxyFixture.start(yaml, new MapResolver().map("reset.test", "127.0.0.1"),
                    ProxyFixture.tempDir())) {
                String answer = RawClient.exchange(proxy.address(), "GET http://" + target + "/stream HTTP/1.1\r\nHost: "
                        + target + "\r\n\r\n");          // keep-alive asked: only the proxy's close ends the read
                served.get(10, TimeUnit.SECONDS);

                assertThat(answer).startsWith("HTTP/1.1 200 ").contains("hello").contains("world");
                assertThat(answer).as("no last chunk: the cut body must not look complete").doesNotContain("\r\n0\r\n");
                AuditFields record = proxy.events.await("exchange", f -> "/stream".equals(f.path()));
                assertThat(record.reason()).as("the audit says the upstream failed").isIn("upstream_failed",
                        "upstream_closed");
                assertThat(record.status()).isEqualTo(200);
                assertThat(record.bytesDown()).as("bytes sent to the client").isPositive()
                        .isLessThanOrEqualTo((long) answer.getBytes(StandardCharsets.ISO_8859_1).length);
            }
        }
    }

    /** Reads one request head, answers a chunked head and two chunks, then resets the connection. */
    private static void resetMidResponse(ServerSocket server) {
        try (Socket s = server.accept()) {
            s.setSoTimeout(10_000);
            InputStream in = s.getInputStream();
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                head.append((char) b);
            }
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n5\r\nworld\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            s.setSoLinger(true, 0);     // close now sends RST, not FIN
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
