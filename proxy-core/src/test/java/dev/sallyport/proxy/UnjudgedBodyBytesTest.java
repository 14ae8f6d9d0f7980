package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A placeholder split across body chunks, toward a host it is not bound to. The body check finds a placeholder once
 * all of it arrived, so the bytes at the end of a chunk that could begin one must wait: a client that sends the
 * chunk and then stalls (or sends the rest later) must never get the placeholder's start to the upstream, not even
 * inside a request the upstream never sees whole. The rest of the body still flows as it is judged, and bytes that
 * cannot begin a placeholder are never held (a streamed body, such as a gRPC call's, is not delayed).
 */
class UnjudgedBodyBytesTest {

    static LenientBench bench;
    static String placeholder;

    @BeforeAll
    static void start() throws Exception {
        bench = new LenientBench(LenientUpstream::echo, "  - name: up\n    hosts: [up.test]\n    ports: [PORTS]\n",
                "secrets:\n  - name: TOKEN\n    from: file:TOKEN_FILE\n    hosts: [elsewhere.test]\n"
                        + "    headers: [Authorization]\n", Map.of("TOKEN_FILE", "unjudged-real-value-9"));
        placeholder = bench.proxy.secrets().placeholders().get("TOKEN");
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    @Test
    void aPlaceholderSplitAcrossChunksNeverReachesTheUpstreamWhileTheRestIsAwaited() {
        Way way = Way.TUNNEL;
        String start = placeholder.substring(0, placeholder.length() - 3);
        String first = "padding-that-is-judged-at-once-".repeat(8) + "token=" + start;
        try (RawConnection client = bench.open(way)) {
            client.send("POST /upload HTTP/1.1\r\nHost: " + bench.host(way) + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(first.length()) + "\r\n" + first + "\r\n");
            // the judged part of the chunk goes on; the placeholder at its end must not, however long we wait
            until(Duration.ofSeconds(10), () -> bench.tls.rawReceived().contains("padding-that-is-judged"));
            during(Duration.ofSeconds(1), () -> !bench.tls.rawReceived().contains(start),
                    "the placeholder's start reached the upstream before it was judged");
            assertThat(bench.tls.rawReceived()).contains("token=");     // what cannot begin one was not held
            String rest = placeholder.substring(placeholder.length() - 3) + "later";
            client.send(Integer.toHexString(rest.length()) + "\r\n" + rest + "\r\n0\r\n\r\n");
            RawConnection.Response refused = client.read();
            assertThat(refused.status()).isEqualTo(403);
            assertThat(refused.header("X-Sallyport-Reason")).isEqualTo("secret_wrong_host");
        }
        assertThat(bench.tls.rawReceived()).doesNotContain(start).doesNotContain("later");
    }

    @Test
    void aWholePlaceholderEndingAChunkIsRefusedAtOnceWithNothingOfTheChunkSent() {
        Way way = Way.TUNNEL;
        String first = "whole-chunk-".repeat(8) + "token=" + placeholder;
        try (RawConnection client = bench.open(way)) {
            client.send("POST /upload-whole HTTP/1.1\r\nHost: " + bench.host(way)
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(first.length()) + "\r\n" + first
                    + "\r\n");
            RawConnection.Response refused = client.read();     // no more of the body needed to judge it
            assertThat(refused.status()).isEqualTo(403);
            assertThat(refused.header("X-Sallyport-Reason")).isEqualTo("secret_wrong_host");
        }
        assertThat(bench.tls.rawReceived()).doesNotContain(placeholder).doesNotContain("whole-chunk-");
    }

    @Test
    void aCleanBodyEndingInTextThatLooksLikeAPlaceholderStartStillArrivesWhole() {
        Way way = Way.TUNNEL;
        String body = "x".repeat(500) + "sallyport-ph-";
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send("POST /clean HTTP/1.1\r\nHost: " + bench.host(way)
                    + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body).read();
            assertThat(r.status()).isEqualTo(200);
        }
        assertThat(LenientBench.find(bench.tls, "/clean").bodyText()).isEqualTo(body);
    }

    /** Polls {@code condition} until it holds, or fails after {@code limit}. */
    static void until(Duration limit, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit);
            }
            Thread.onSpinWait();
        }
    }

    /** Fails with {@code message} as soon as {@code condition} stops holding within {@code window}. */
    static void during(Duration window, java.util.function.BooleanSupplier condition, String message) {
        long end = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < end) {
            assertThat(condition.getAsBoolean()).as(message).isTrue();
            Thread.onSpinWait();
        }
    }
}
