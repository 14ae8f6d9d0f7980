package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Await;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** DEFENCES.md class 8: slowloris, connection and tunnel floods, oversized bodies. */
class LimitsTest {

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static String target;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        upstream = EchoUpstream.http();
        target = "upstream.test:" + upstream.port();
        String rules = "  - name: upstream\n    hosts: [upstream.test, slow.test]\n    ports: [" + upstream.port() + "]\n";
        String limits = "  limits: {max_connections: 3, max_tunnels: 1, max_body_bytes: 100000}\n"
                + "  timeouts: {idle: 1s, connect: 1s}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(null, "upstream.test:" + upstream.port(), limits, rules),
                new MapResolver().map("upstream.test", "127.0.0.1").hang("slow.test"), dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    @Test
    void aClientTricklingHeaderBytesIsCutOffAtTheHeaderDeadline() throws Exception {
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            byte[] head = ("GET http://" + target + "/ HTTP/1.1\r\nHost: " + target + "\r\nX-Slow: "
                    + "a".repeat(200)).getBytes(StandardCharsets.US_ASCII);
            int[] next = {0};
            long started = System.nanoTime();
            trickle.scheduleAtFixedRate(() -> {
                try {
                    if (next[0] < head.length) {
                        out.write(head[next[0]++]);
                        out.flush();
                    }
                } catch (Exception ignored) {
                    // the proxy closed the connection: that is the point
                }
            }, 0, 100, TimeUnit.MILLISECONDS);
            String response = RawClient.readAll(s.getInputStream());
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertThat(response).startsWith("HTTP/1.1 408 ").contains("X-Sallyport-Reason: header_timeout");
            assertThat(tookMs).isLessThan(4000);
            assertThat(next[0]).isLessThan(head.length);
        } finally {
            trickle.shutdownNow();
        }
    }

    @Test
    void connectionsBeyondTheLimitAreRefusedWith503() throws Exception {
        // the proxy is shared: connections of earlier tests may still be closing and would hold slots
        var active = proxy.proxy.metrics().registry().get("sallyport.connections.active").gauge();
        Await.until("earlier tests' connections closed", Duration.ofSeconds(10), () -> active.value() <= 0);
        java.util.List<Socket> sockets = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                Socket s = new Socket("127.0.0.1", proxy.port());
                s.setSoTimeout(5000);
                s.getOutputStream().write('G');
                sockets.add(s);
            }
            java.util.List<String> answers = new java.util.ArrayList<>();
            for (Socket s : sockets) {
                answers.add(RawClient.readAll(s.getInputStream()).lines().findFirst().orElse(""));
            }
            assertThat(answers.stream().filter(a -> a.startsWith("HTTP/1.1 503 "))).hasSizeGreaterThanOrEqualTo(3);
            assertThat(answers.stream().filter(a -> a.startsWith("HTTP/1.1 408 "))).isNotEmpty();
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    @Test
    void tunnelsBeyondTheLimitAreRefused() throws Exception {
        try (Socket first = new Socket("127.0.0.1", proxy.port())) {
            first.setSoTimeout(5000);
            first.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(first.getInputStream().readNBytes(12), StandardCharsets.US_ASCII))
                    .isEqualTo("HTTP/1.1 200");
            String second = RawClient.exchange(proxy.address(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target
                    + "\r\n\r\n");
            assertThat(second).startsWith("HTTP/1.1 503 ").contains("X-Sallyport-Reason: too_many_tunnels");
        }
    }

    @Test
    void aChunkedBodyOverTheCapIsAnswered413AndNeverCompletesUpstream() {
        int before = upstream.requests.size();
        String chunk = "8000\r\n" + "z".repeat(0x8000) + "\r\n";
        String response = RawClient.exchange(proxy.address(), "POST http://" + target + "/cap HTTP/1.1\r\nHost: "
                + target + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk.repeat(4) + "0\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 413 ").contains("X-Sallyport-Reason: body_too_large");
        assertThat(upstream.requests).hasSize(before);
    }

    @Test
    void aResolverThatHangsGives504AfterTheConnectTimeout() {
        long started = System.nanoTime();
        String response = RawClient.exchange(proxy.address(), "GET http://slow.test:" + upstream.port()
                + "/ HTTP/1.1\r\nHost: slow.test:" + upstream.port() + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 504 ").contains("X-Sallyport-Reason: dns_timeout");
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(4000L);
    }

    @Test
    void aSlowUpstreamIsNotCutOffByTheClientIdleTimeout() {
        String response = RawClient.exchange(proxy.address(), "GET http://" + target + "/delay/2500 HTTP/1.1\r\nHost: "
                + target + "\r\nConnection: close\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 200 ").contains("GET /delay/2500");
    }

    @Test
    void anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(5000);
            long started = System.nanoTime();
            assertThat(s.getInputStream().read()).isEqualTo(-1);
            assertThat((System.nanoTime() - started) / 1_000_000).isBetween(500L, 4000L);
        }
    }
}
