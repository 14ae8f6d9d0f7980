package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.HttpReads;
import dev.sallyport.testing.upstream.LenientUpstream;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clients that fetch a highly compressed body from a host a secret is bound to (so the proxy decodes the body to
 * scrub it) and then do not read: the decoded body must wait for the client, not pile up in the proxy. 48 MiB of
 * decoded body per client, 12 clients: before, the proxy held all of it (hundreds of MiB of direct memory, then
 * out of memory); now each holds about one client buffer of it. A client that does read gets every byte.
 */
class CompressedSlowReaderTest {

    static final int DECODED = 48 << 20;
    static final int CLIENTS = 12;

    static LenientBench bench;
    static byte[] gzip;

    @BeforeAll
    static void start() throws Exception {
        ByteArrayOutputStream compressed = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(compressed)) {
            byte[] zeros = new byte[1 << 20];
            for (int i = 0; i < DECODED >> 20; i++) {
                z.write(zeros);
            }
        }
        gzip = compressed.toByteArray();
        LenientUpstream.Responder responder = (request, connection) -> {
            connection.write(("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + gzip.length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            connection.write(gzip);
        };
        bench = new LenientBench(responder, "  - name: up\n    hosts: [up.test]\n    ports: [PORTS]\n",
                "secrets:\n  - name: TOKEN\n    from: file:TOKEN_FILE\n    hosts: [up.test]\n"
                        + "    headers: [Authorization]\n", Map.of("TOKEN_FILE", "a-real-token-value-42"));
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    @Test
    void clientsThatDoNotReadADecodedBodyHoldLittleOfItInTheProxy() {
        long before = used();
        List<RawConnection> idle = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                RawConnection c = bench.open(Way.TUNNEL);
                idle.add(c);
                String head = c.send(bench.request(Way.TUNNEL, "GET", "/bomb-" + i)).readResponseHead();
                assertThat(head).as("client " + i).startsWith("HTTP/1.1 200").containsIgnoringCase("chunked")
                        .doesNotContainIgnoringCase("Content-Encoding");
            }
            long peak = 0;
            long deadline = System.nanoTime() + 1_500_000_000L;     // watch a while: growth would show at once
            while (System.nanoTime() < deadline) {
                peak = Math.max(peak, used() - before);
                Thread.onSpinWait();
            }
            assertThat(peak).as("Netty memory the proxy holds for " + CLIENTS + " stalled clients of "
                    + (DECODED >> 20) + " MiB decoded each").isLessThan(32L << 20);

            RawConnection reader = idle.getFirst();
            assertThat(countChunked(reader.input())).as("a client that reads gets the whole decoded body")
                    .isEqualTo(DECODED);
        } finally {
            idle.forEach(RawConnection::close);
        }
    }

    /** Decoded body bytes of a chunked body (all zeros), without holding them. */
    static long countChunked(InputStream in) {
        try {
            long total = 0;
            byte[] buf = new byte[64 * 1024];
            while (true) {
                String line = HttpReads.readLine(in);
                int size = Integer.parseInt(line.split(";")[0].trim(), 16);
                if (size == 0) {
                    HttpReads.readLine(in);
                    return total;
                }
                for (int left = size; left > 0; ) {
                    int n = in.read(buf, 0, Math.min(buf.length, left));
                    if (n < 0) {
                        throw new IllegalStateException("closed in a chunk");
                    }
                    for (int i = 0; i < n; i++) {
                        if (buf[i] != 0) {
                            throw new IllegalStateException("body byte " + (total + i) + " is not the upstream's");
                        }
                    }
                    left -= n;
                    total += n;
                }
                HttpReads.readLine(in);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static long used() {
        ByteBufAllocatorMetric m = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
        return m.usedDirectMemory() + m.usedHeapMemory();
    }
}
