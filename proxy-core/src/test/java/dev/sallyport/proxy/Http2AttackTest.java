package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawH2;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Trust;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2's own attacks that {@link Http2Test} does not make, from raw frames: SETTINGS and WINDOW_UPDATE floods, a
 * zero window held forever, a header block never finished, a body shorter than its {@code content-length}, and
 * extended CONNECT. The proxy's idle timeout is 2 s here, so that what it bounds ends within a test.
 */
class Http2AttackTest {

    static final int MIB = 1024 * 1024;

    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;
    static String authority;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test");
        String rules = "  - name: api\n    hosts: [api.test]\n    ports: [" + up.tls.port() + "]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, "api.test:" + up.tls.port(),
                "  http2: true\n  timeouts: {idle: 2s}\n", rules), new MapResolver().map("api.test", "127.0.0.1"),
                up.dir);
        trust = Trust.of(proxy.caPem);
        authority = "api.test:" + up.tls.port();
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    static RawH2 raw() {
        return RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context);
    }

    /** Sends {@code frame} up to {@code count} times, until the proxy cuts the connection (true) or not (false). */
    static boolean floodUntilCut(RawH2 c, int count, Consumer<RawH2> frame) {
        for (int i = 0; i < count; i++) {
            try {
                frame.accept(c);
            } catch (UncheckedIOException closed) {
                return true;
            }
        }
        return c.awaitGoaway() != null;
    }

    static String tunnelReason(String client) {
        return proxy.events.await("tunnel_end", f -> client.equals(f.client())).reason();
    }

    static void anotherConnectionIsServed(String path) {
        try (RawH2 other = raw()) {
            other.headers(1, true, RawH2.request("GET", authority, path));
            assertThat(other.await(1).status()).isEqualTo("200");
        }
    }

    @Test
    void aSettingsFloodFromAClientThatNeverReadsEndsItsConnectionAlone() {
        String client;
        boolean cut;
        try (RawH2 c = RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context, 4096)) {
            client = c.client();
            // up to 1,000,000 SETTINGS frames (15 MB), each owed an acknowledgement the client never reads
            byte[] setting = RawH2.setting(0x3, 100);
            cut = floodUntilCut(c, 1_000, r -> r.frames(1_000, RawH2.SETTINGS, 0, 0, setting));
        }
        assertThat(cut).as("the proxy ended the flooding connection").isTrue();
        assertThat(tunnelReason(client)).isEqualTo("h2_enhance_your_calm");
        anotherConnectionIsServed("/h2/after-settings-flood");
    }

    @Test
    void aWindowUpdateFloodEndsTheConnectionWhileADownloadEarnsItsWindowUpdates() {
        String client;
        boolean cut;
        try (RawH2 c = raw()) {
            client = c.client();
            // none is answered, so no queue fills: up to 100,000 one-byte increments the proxy sent no data for
            byte[] one = RawH2.int32(1);
            cut = floodUntilCut(c, 100, r -> r.frames(1_000, RawH2.WINDOW_UPDATE, 0, 0, one));
        }
        assertThat(cut).as("the proxy ended the flooding connection").isTrue();
        assertThat(tunnelReason(client)).isEqualTo("h2_window_update_flood");

        try (RawH2 c = raw()) {      // a client reading 4 MiB with a 16 KiB window sends a WINDOW_UPDATE per frame
            c.settings(0x4, 16 * 1024);
            c.headers(1, true, RawH2.request("GET", authority, "/bytes/" + 4 * MIB));
            long body = 0;
            boolean ended = false;
            for (RawH2.Frame f; !ended && (f = c.next()) != null; ) {
                if (f.type() == RawH2.DATA && f.stream() == 1) {
                    body += f.payload().length;
                    if (f.payload().length > 0) {
                        c.windowUpdate(1, f.payload().length).windowUpdate(0, f.payload().length);
                    }
                }
                ended = f.stream() == 1 && (f.endStream() || f.type() == RawH2.RST_STREAM);
            }
            assertThat(body).isEqualTo(4L * MIB);
        }
    }

    @Test
    void aZeroWindowHeldForeverReleasesTheStreamAndItsUpstreamConnectionWithoutBufferingTheBody() {
        long size = 128L * MIB;
        String path = "/bytes/" + size;
        long start = System.nanoTime();
        RawH2.StreamResult r;
        try (RawH2 c = raw()) {
            c.settings(0x4, 0);      // SETTINGS_INITIAL_WINDOW_SIZE 0, and never a WINDOW_UPDATE
            c.headers(1, true, RawH2.request("GET", authority, path));
            r = c.await(1);
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(r.status()).as("the response head is not flow-controlled").isEqualTo("200");
        assertThat(r.resetCode()).as("the stream is reset, not left open").isNotNull();
        assertThat(tookMs).as("released after the upstream idle timeout (2 s)").isLessThan(9_000);
        AuditFields f = proxy.events.await("exchange", e -> path.equals(e.path()));
        assertThat(f.bytesDown()).as("what reached the client").isLessThan(size);
        assertThat(up.tls.bytesStreamed.get()).as("the upstream was held back, the body never buffered whole")
                .isLessThan(32L * MIB);
    }

    @Test
    void aHeaderBlockNeverFinishedEndsTheConnectionAtTheHeadDeadline() {
        byte[] block = RawH2.block(RawH2.request("GET", authority, "/h2/slow-headers"));
        String client;
        long tookMs;
        try (RawH2 c = raw()) {
            client = c.client();
            proxySettings(c);       // acknowledged before the block: nothing else may come between its frames
            long start = System.nanoTime();
            long giveUp = start + Duration.ofSeconds(30).toNanos();
            c.frame(RawH2.HEADERS, RawH2.END_STREAM, 1, Arrays.copyOfRange(block, 0, 1));   // no END_HEADERS
            // then one byte of the block a second: never idle for 2 s, and Netty alone allows 16 such frames
            for (int sent = 1; sent < block.length - 1 && !c.closed() && System.nanoTime() < giveUp; ) {
                if (c.quietFor(Duration.ofSeconds(1))) {
                    try {
                        c.frame(RawH2.CONTINUATION, 0, 1, Arrays.copyOfRange(block, sent, sent + 1));
                        sent++;
                    } catch (UncheckedIOException closed) {
                        break;
                    }
                } else if (c.seen().stream().anyMatch(f -> f.type() == RawH2.GOAWAY)) {
                    break;
                }
            }
            tookMs = (System.nanoTime() - start) / 1_000_000;
        }
        assertThat(tookMs).as("ended at the head deadline (2 s), not after 16 trickled frames").isLessThan(8_000);
        assertThat(tunnelReason(client)).isEqualTo("h2_headers_timeout");
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/slow-headers");
    }

    @Test
    void aBodyShorterThanItsContentLengthNeverReachesTheUpstreamAsARequest() {
        try (RawH2 c = raw()) {
            c.headers(1, false, RawH2.request("POST", authority, "/h2/short-cl", "content-length", "10"));
            c.data(1, true, "abcd".getBytes(StandardCharsets.US_ASCII));
            assertThat(c.await(1).status()).isNotEqualTo("200");
            c.headers(3, true, RawH2.request("GET", authority, "/h2/after-short-cl"));
            assertThat(c.await(3).status()).isEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/short-cl");
        AuditFields f = proxy.events.await("exchange", e -> "/h2/short-cl".equals(e.path()));
        assertThat(f.reason()).isEqualTo("content_length_mismatch");
        assertThat(f.status()).isEqualTo(400);
    }

    /** Reads up to the proxy's SETTINGS frame (acknowledged on the way). */
    static RawH2.Frame proxySettings(RawH2 c) {
        for (RawH2.Frame f; (f = c.next()) != null; ) {
            if (f.type() == RawH2.SETTINGS && (f.flags() & RawH2.ACK) == 0) {
                return f;
            }
        }
        throw new AssertionError("the proxy sent no SETTINGS");
    }

    @Test
    void theProxyDoesNotOfferExtendedConnectAndRefusesIt() {
        try (RawH2 c = raw()) {
            byte[] p = proxySettings(c).payload();
            for (int at = 0; at + 6 <= p.length; at += 6) {
                int id = ((p[at] & 0xff) << 8) | (p[at + 1] & 0xff);
                assertThat(id).as("SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441)").isNotEqualTo(0x8);
            }
            c.headers(1, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority",
                    authority, ":path", "/ws");
            assertThat(c.await(1).status()).isNotEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/ws");
    }
}
