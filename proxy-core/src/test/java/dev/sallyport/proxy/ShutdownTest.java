package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** close(): stop accepting at once, wait for open exchanges up to shutdown_grace, then release everything. */
class ShutdownTest {

    static Path dir;
    static EchoUpstream upstream;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        upstream = EchoUpstream.http();
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    ProxyFixture proxy() throws Exception {
        String rules = "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n";
        return ProxyFixture.start(ProxyFixture.policy(null, "upstream.test:" + upstream.port(),
                "  timeouts: {shutdown_grace: 2s, response_headers: 30s}\n", rules),
                new MapResolver().map("upstream.test", "127.0.0.1"), dir);
    }

    @Test
    void closeStopsAcceptingAndWaitsForAnOpenExchangeUpToTheGrace() throws Exception {
        ProxyFixture p = proxy();
        int port = p.port();
        try (Socket client = new Socket("127.0.0.1", port)) {
            String target = "upstream.test:" + upstream.port();
            client.getOutputStream().write(("GET http://" + target + "/silent HTTP/1.1\r\nHost: " + target
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            p.events.await("request", f -> "/silent".equals(f.path()));
            long started = System.nanoTime();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(p::close);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            boolean refused = false;
            while (!refused && System.nanoTime() < deadline) {
                try (Socket _ = new Socket("127.0.0.1", port)) {
                    Thread.onSpinWait();
                } catch (IOException e) {
                    refused = true;
                }
            }
            assertThat(refused).as("new connections refused while draining").isTrue();
            assertThat(closing).as("still draining the open exchange").isNotDone();
            closing.get(10, TimeUnit.SECONDS);
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertThat(tookMs).isBetween(1500L, 8000L);
            client.setSoTimeout(5000);
            assertThat(client.getInputStream().read()).isEqualTo(-1);
        }
    }

    @Test
    void closeWithNothingOpenIsQuick() throws Exception {
        ProxyFixture p = proxy();
        long started = System.nanoTime();
        p.close();
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(1500L);
        assertThatThrownBy(() -> new Socket("127.0.0.1", p.port()).close()).isInstanceOf(IOException.class);
    }
}
