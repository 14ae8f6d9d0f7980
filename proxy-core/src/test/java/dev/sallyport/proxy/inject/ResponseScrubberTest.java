package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static dev.sallyport.proxy.inject.Fixtures.contains;
import static dev.sallyport.proxy.inject.Fixtures.env;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ResponseScrubberTest {

    private static final long CAP = 8L << 20;
    private final String value = Fixtures.token("sk-");
    private SecretStore store;
    private ResponseScrubber scrubber;

    @BeforeEach
    void setUp() throws Exception {
        store = Fixtures.store(Map.of("K", value), env("K", List.of("api.example.com"), List.of("Authorization")));
        scrubber = store.exchange("api.example.com").responseScrubber(ByteBufAllocator.DEFAULT, CAP);
    }

    @AfterEach
    void tearDown() {
        scrubber.close();
    }

    private static HttpResponse head(String... nameValues) {
        HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        for (int i = 0; i < nameValues.length; i += 2) {
            r.headers().add(nameValues[i], nameValues[i + 1]);
        }
        return r;
    }

    /** Runs head + body in chunks of {@code chunk} bytes + empty last through scrub(); returns the body bytes. */
    private byte[] run(ResponseScrubber s, HttpResponse head, byte[] body, int chunk) throws Exception {
        List<Object> out = new ArrayList<>();
        try {
            s.scrub(head, out);
            for (int i = 0; i < body.length; i += chunk) {
                s.scrub(new DefaultHttpContent(Unpooled.wrappedBuffer(body, i, Math.min(chunk, body.length - i))), out);
            }
            s.scrub(LastHttpContent.EMPTY_LAST_CONTENT, out);
        } catch (Exception e) {
            body(out);
            throw e;
        }
        assertThat(out.getFirst()).isSameAs(head);
        assertThat(out.getLast()).isInstanceOf(LastHttpContent.class);
        return body(out);
    }

    static byte[] body(List<Object> out) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (Object o : out) {
            if (o instanceof HttpContent c) {
                ByteBuf buf = c.content();
                byte[] chunk = new byte[buf.readableBytes()];
                buf.getBytes(buf.readerIndex(), chunk);
                b.writeBytes(chunk);
                c.release();
            }
        }
        return b.toByteArray();
    }

    static String marker(int n) {
        return "[sallyport:redacted]".repeat(n / 20 + 1).substring(0, n);
    }

    static byte[] gzip(byte[] in) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (GZIPOutputStream g = new GZIPOutputStream(b)) {
            g.write(in);
        }
        return b.toByteArray();
    }

    static byte[] deflate(byte[] in, boolean raw) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DeflaterOutputStream d = new DeflaterOutputStream(b, new Deflater(6, raw))) {
            d.write(in);
        }
        return b.toByteArray();
    }

    @Test
    void plainBodyInOneByteChunksKeepsItsLength() throws Exception {
        byte[] body = bytes("{\"token\":\"" + value + "\",\"ok\":true}");
        HttpResponse h = head("Content-Length", String.valueOf(body.length));
        byte[] got = run(scrubber, h, body, 1);
        assertThat(got).hasSize(body.length);
        assertThat(contains(got, bytes(value))).isFalse();
        assertThat(new String(got, StandardCharsets.UTF_8)).startsWith("{\"token\":\"[sallyport:redacted]");
        assertThat(h.headers().getInt("Content-Length")).isEqualTo(body.length);
        assertThat(scrubber.redactedBytes()).isEqualTo(0);   // reset by the last content
    }

    @Test
    void headersReasonAndTrailersAreScrubbed() throws Exception {
        HttpResponse h = new DefaultHttpResponse(HttpVersion.HTTP_1_1, new HttpResponseStatus(401, "bad " + value));
        h.headers().add("X-Echo", "Bearer " + value).add("X-" + value, "1").add("X-Fine", "yes");
        List<Object> out = new ArrayList<>();
        scrubber.scrub(h, out);
        assertThat(h.status().code()).isEqualTo(401);
        assertThat(h.status().reasonPhrase()).doesNotContain(value).startsWith("bad [sallyport:");
        assertThat(h.headers().names()).containsExactly("X-Echo", "X-Fine");
        assertThat(h.headers().get("X-Echo")).doesNotContain(value).hasSize(("Bearer " + value).length());
        LastHttpContent last = new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER);
        last.trailingHeaders().add("X-Trailer", value);
        scrubber.scrub(last, out);
        LastHttpContent sent = (LastHttpContent) out.getLast();
        assertThat(sent.trailingHeaders().get("X-Trailer")).doesNotContain(value);
        body(out);
    }

    @Test
    void fullResponseIsSplitIntoHeadContentAndLast() throws Exception {
        DefaultFullHttpResponse full = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.copiedBuffer(bytes("v=" + value)));
        List<Object> out = new ArrayList<>();
        scrubber.scrub(full, out);
        assertThat(out.getFirst()).isInstanceOf(HttpResponse.class).isNotInstanceOf(HttpContent.class);
        assertThat(contains(body(out), bytes(value))).isFalse();
        assertThat(full.refCnt()).isZero();
    }

    @Test
    void gzipBodyOnASensitiveHostIsDecodedScrubbedAndSentPlain() throws Exception {
        String text = ("line with " + value + " inside\n").repeat(200);
        byte[] gz = gzip(bytes(text));
        HttpResponse h = head("Content-Encoding", "gzip", "Content-Length", String.valueOf(gz.length), "ETag", "\"abc\"");
        byte[] got = run(scrubber, h, gz, 1);
        assertThat(got).hasSize(text.length());
        assertThat(contains(got, bytes(value))).isFalse();
        assertThat(new String(got, StandardCharsets.UTF_8)).startsWith("line with [sallyport:redacted]");
        assertThat(h.headers().contains("Content-Encoding")).isFalse();
        assertThat(h.headers().contains("Content-Length")).isFalse();
        assertThat(h.headers().get("Transfer-Encoding")).isEqualTo("chunked");
        assertThat(h.headers().get("ETag")).isEqualTo("W/\"abc\"");
    }

    @Test
    void concatenatedGzipMembersAndDeflateFlavoursDecode() throws Exception {
        byte[] a = gzip(bytes("first " + value));
        byte[] b = gzip(bytes(" second"));
        byte[] both = new byte[a.length + b.length];
        System.arraycopy(a, 0, both, 0, a.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        assertThat(new String(run(scrubber, head("Content-Encoding", "x-gzip"), both, 3), StandardCharsets.UTF_8))
                .isEqualTo("first " + marker(value.length()) + " second");
        for (boolean raw : new boolean[] {false, true}) {
            byte[] d = deflate(bytes("d " + value), raw);
            assertThat(new String(run(scrubber, head("Content-Encoding", "deflate"), d, 2), StandardCharsets.UTF_8)).as("raw=" + raw)
                    .isEqualTo("d " + marker(value.length()));
        }
    }

    @Test
    void compressionBombFailsClosed() throws Exception {
        byte[] bomb = gzip(new byte[(int) CAP + 1024]);
        assertThat(bomb.length).isLessThan(64 * 1024);
        List<Object> out = new ArrayList<>();
        scrubber.scrub(head("Content-Encoding", "gzip"), out);
        assertThatThrownBy(() -> {
            for (int i = 0; i < bomb.length; i += 4096) {
                scrubber.scrub(new DefaultHttpContent(Unpooled.wrappedBuffer(bomb, i, Math.min(4096, bomb.length - i))), out);
            }
        }).isInstanceOf(ResponseDecodeException.class)
                .hasMessageContaining("larger than " + CAP)
                .satisfies(e -> assertThat(((ResponseDecodeException) e).reason()).isEqualTo("response_decode_failed"));
        long forwarded = body(out).length;
        assertThat(forwarded).isLessThanOrEqualTo(CAP);
    }

    @Test
    void corruptOrTruncatedCompressedBodiesFailClosed() throws Exception {
        byte[] gz = gzip(bytes("hello " + value + " world, long enough to matter"));
        byte[] truncated = java.util.Arrays.copyOf(gz, gz.length - 5);
        assertThatThrownBy(() -> run(scrubber, head("Content-Encoding", "gzip"), truncated, 7))
                .isInstanceOf(ResponseDecodeException.class).hasMessageContaining("ended early");
        byte[] corrupt = gz.clone();
        corrupt[gz.length - 6] ^= 0x55;   // CRC
        assertThatThrownBy(() -> run(scrubber, head("Content-Encoding", "gzip"), corrupt, 7))
                .isInstanceOf(ResponseDecodeException.class);
        assertThatThrownBy(() -> run(scrubber, head("Content-Encoding", "gzip"), bytes("not gzip at all"), 4))
                .isInstanceOf(ResponseDecodeException.class).hasMessageContaining("not a gzip member");
    }

    @Test
    void unsupportedEncodingsAreRefusedAtTheHead() {
        for (String ce : List.of("br", "zstd", "gzip, br", "compress")) {
            assertThatThrownBy(() -> scrubber.onHead(head("Content-Encoding", ce))).as(ce)
                    .isInstanceOf(ResponseDecodeException.class).hasMessageContaining("cannot be scrubbed");
        }
        assertThatThrownBy(() -> scrubber.onHead(head("Transfer-Encoding", "gzip, chunked")))
                .isInstanceOf(ResponseDecodeException.class);
    }

    @Test
    void headResponseWithGzipEncodingAndNoBodyIsFine() throws Exception {
        HttpResponse h = head("Content-Encoding", "gzip", "Content-Length", "1234");
        assertThat(run(scrubber, h, new byte[0], 1)).isEmpty();
    }

    @Test
    void bodilessStatusesKeepTheirHeaders() throws Exception {
        HttpResponse h = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_MODIFIED);
        h.headers().add("Content-Encoding", "br").add("ETag", "\"x\"");
        scrubber.onHead(h);
        assertThat(h.headers().get("Content-Encoding")).isEqualTo("br");
        assertThat(h.headers().contains("Transfer-Encoding")).isFalse();
    }

    @Test
    void unboundHostsPassCompressedBodiesThroughButStillScrubRawBytes() throws Exception {
        try (ResponseScrubber other = store.exchange("cdn.example.org").responseScrubber(ByteBufAllocator.DEFAULT, CAP)) {
            byte[] gz = gzip(bytes("zzz"));
            HttpResponse h = head("Content-Encoding", "br");
            assertThat(run(other, h, gz, 5)).isEqualTo(gz);
            assertThat(h.headers().get("Content-Encoding")).isEqualTo("br");
            assertThat(contains(run(other, head(), bytes("echo " + value), 2), bytes(value))).isFalse();
        }
    }

    @Test
    void emptyStorePassesBuffersThroughUntouched() throws Exception {
        try (ResponseScrubber none = SecretStore.empty().exchange("x.example.com").responseScrubber(ByteBufAllocator.DEFAULT, CAP)) {
            assertThat(none.active()).isFalse();
            ByteBuf in = Unpooled.copiedBuffer(bytes("payload"));
            List<ByteBuf> out = new ArrayList<>();
            none.onContent(in, out::add);
            assertThat(out).containsExactly(in);
            in.release();
        }
    }

    @Test
    void scrubberWorksForASecondResponseAfterAnInterim() throws Exception {
        List<Object> out = new ArrayList<>();
        scrubber.scrub(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE), out);
        byte[] second = run(scrubber, head(), bytes("x" + value), 1);
        assertThat(contains(second, bytes(value))).isFalse();
        body(out);
    }

    @Test
    void maxDecodedMustBePositive() {
        assertThatThrownBy(() -> store.exchange("a.example.com").responseScrubber(ByteBufAllocator.DEFAULT, 0))
                .hasMessage("maxDecodedBytes: 0 (expected: > 0)");
    }
}
