package dev.sallyport.proxy.inject;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpResponse;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Fuzz target: the response scrubber with its gzip and deflate decoders. Two shapes, chosen by the first byte: a
 * body the target builds (fuzzed bytes with the real value spliced in at fuzzed places, then encoded as
 * identity, gzip or deflate, and fed in fuzzed pieces), whose scrubbed form must have the plain body's length and
 * hold no form of the real value; and raw fuzzed bytes labelled gzip or deflate (corrupt streams, bombs), which
 * must end in a {@link ResponseDecodeException} or in at most the decoding cap, never another exception, never a
 * leaked buffer, never the real value. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/inject/ResponseScrubberFuzzTestInputs/}.
 */
class ResponseScrubberFuzzTest {

    private static final long CAP = 256 * 1024;
    private static final String VALUE = "sk-fuzz-0123456789ABCDEFGHIJklmnopqrstuvwxyz";
    private static final List<byte[]> FORMS = Fixtures.forbiddenForms(VALUE);
    private static final SecretStore STORE;

    static {
        try {
            STORE = Fixtures.store(Map.of("K", VALUE),
                    Fixtures.env("K", List.of("api.example.com"), List.of("Authorization")));
        } catch (SecretLoadException e) {
            throw new IllegalStateException(e);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void noRealValueAndNoBombGetsThrough(FuzzedDataProvider data) throws Exception {
        int shape = data.consumeInt(0, 5);
        int piece = data.consumeInt(1, 4096);
        String coding = switch (shape % 3) {
            case 0 -> null;
            case 1 -> "gzip";
            default -> "deflate";
        };
        byte[] plain = null;
        byte[] body;
        if (shape < 3) {
            ByteArrayOutputStream built = new ByteArrayOutputStream();
            int splices = data.consumeInt(0, 4);
            for (int i = 0; i < splices; i++) {
                built.writeBytes(data.consumeBytes(data.consumeInt(0, 256)));
                built.writeBytes(FORMS.get(data.consumeInt(0, FORMS.size() - 1)));
            }
            built.writeBytes(data.consumeRemainingAsBytes());
            plain = built.toByteArray();
            body = coding == null ? plain : encode(coding, plain);
        } else {
            body = data.consumeRemainingAsBytes();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ResponseScrubber scrubber = STORE.exchange("api.example.com").responseScrubber(ByteBufAllocator.DEFAULT,
                CAP)) {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            if (coding != null) {
                head.headers().set("Content-Encoding", coding);
            }
            scrubber.onHead(head);
            for (int i = 0; i < body.length; i += piece) {
                scrubber.onContent(Unpooled.wrappedBuffer(body, i, Math.min(piece, body.length - i)), b -> take(b, out));
                assertThat(coding == null || out.size() <= CAP).as("decoded so far, under the cap").isTrue();
            }
            scrubber.onLast(new DefaultHttpHeaders(), b -> take(b, out));
        } catch (ResponseDecodeException e) {
            assertThat(plain == null || plain.length > CAP)
                    .as("a body the target encoded itself decodes: " + e.getMessage()).isTrue();
        }
        byte[] sent = out.toByteArray();
        if (coding != null) {
            assertThat((long) sent.length).as("decoded bytes, under the cap").isLessThanOrEqualTo(CAP);
        }
        for (byte[] form : FORMS) {
            assertThat(Fixtures.contains(sent, form)).as("a form of the real value reached the client").isFalse();
        }
        if (plain != null && plain.length <= CAP) {
            assertThat(sent.length).as("the scrubbed body keeps the plain body's length").isEqualTo(plain.length);
        }
    }

    private static void take(ByteBuf b, ByteArrayOutputStream out) {
        try {
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            out.writeBytes(bytes);
        } finally {
            b.release();
        }
    }

    private static byte[] encode(String coding, byte[] plain) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (var z = coding.equals("gzip") ? new GZIPOutputStream(out)
                : new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, false))) {
            z.write(plain);
        }
        return out.toByteArray();
    }
}
