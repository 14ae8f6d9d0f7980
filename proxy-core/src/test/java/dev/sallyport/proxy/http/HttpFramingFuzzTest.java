package dev.sallyport.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sallyport.policy.Limits;
import dev.sallyport.proxy.connect.ClientPipeline;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzz target: the framing guard and its head scanner against Netty's decoder, configured as the client
 * pipeline configures it. Invariants: the guard passes bytes unchanged (all of them, or those before its
 * fault); its verdict does not depend on how the bytes were split into reads; and whatever it lets through,
 * the decoder behind it reads the messages it passed whole as the same messages: no decoder failure, as many
 * requests and message ends as the guard counted (a disagreement is a smuggling shape). Seeds and regression inputs:
 * {@code src/test/resources/dev/sallyport/proxy/http/HttpFramingFuzzTestInputs/}.
 */
class HttpFramingFuzzTest {

    private static final Limits LIMITS = new Limits(100, 100, 1024, 256, 4096);

    @FuzzTest
    void whatTheGuardPassesTheDecoderReadsAlike(FuzzedDataProvider data) {
        int piece = data.consumeInt(1, 64);
        byte[] input = data.consumeRemainingAsBytes();

        Fed whole = feed(input, Math.max(1, input.length));
        Fed split = feed(input, piece);
        Fed bytewise = feed(input, 1);
        for (Fed other : new Fed[] {split, bytewise}) {
            assertThat(other.violation).as("verdict whatever the split").isEqualTo(whole.violation);
            assertThat(other.bytes).as("bytes passed whatever the split").isEqualTo(whole.bytes);
            assertThat(other.ended).isEqualTo(whole.ended);
        }
        byte[] expected = whole.violation == null ? input : prefix(input, whole.bytes.length);
        assertThat(whole.bytes).as("bytes pass unchanged").isEqualTo(expected);

        // the messages the guard passed whole, up to the byte where the last of them ended, read by the decoder
        byte[] judged = prefix(input, bytewise.lastEnd);
        Decoded decoded = decode(judged);
        assertThat(decoded.failure).as("decoder failure on messages the guard passed").isNull();
        assertThat(decoded.ended).as("messages ended: decoder vs guard").isEqualTo(whole.ended);
        assertThat(decoded.heads).as("request heads: decoder vs guard").isEqualTo(whole.ended);
    }

    /** What passed, the violation if any, how many messages ended, and (byte by byte only) where the last one did. */
    private record Fed(byte[] bytes, Violation violation, long ended, int lastEnd) {}

    private record Decoded(String failure, long ended, long heads) {}

    private static Fed feed(byte[] input, int piece) {
        HttpFramingGuard guard = new HttpFramingGuard(LIMITS, Duration.ofSeconds(30));
        EmbeddedChannel ch = new EmbeddedChannel(guard);
        ByteArrayOutputStream passed = new ByteArrayOutputStream();
        Violation violation = null;
        long ended = 0;
        int lastEnd = 0;
        for (int i = 0; i < input.length; i += piece) {
            int n = Math.min(piece, input.length - i);
            ch.writeInbound(Unpooled.copiedBuffer(input, i, n));
            for (Object o; (o = ch.readInbound()) != null; ) {
                if (o instanceof ByteBuf b) {
                    passed.writeBytes(ByteBufUtil.getBytes(b));
                    b.release();
                } else if (o instanceof Violation v) {
                    assertThat(violation).as("one violation at most").isNull();
                    violation = v;
                }
            }
            if (guard.messagesEnded() > ended && violation == null) {
                ended = guard.messagesEnded();
                lastEnd = i + n;
            }
        }
        ch.finishAndReleaseAll();
        return new Fed(passed.toByteArray(), violation, guard.messagesEnded(), lastEnd);
    }

    private static Decoded decode(byte[] input) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpServerCodec(ClientPipeline.decoderConfig(LIMITS)));
        ch.writeInbound(Unpooled.wrappedBuffer(input));
        List<Object> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add(o);
        }
        String failure = null;
        long ended = 0;
        long heads = 0;
        for (Object o : out) {
            if (o instanceof HttpObject h && failure == null && h.decoderResult().isFailure()) {
                failure = h.decoderResult().cause().toString();
            }
            if (o instanceof HttpRequest) {
                heads++;
            }
            if (o instanceof LastHttpContent) {
                ended++;
            }
            ReferenceCountUtil.release(o);
        }
        ch.finishAndReleaseAll();
        return new Decoded(failure, ended, heads);
    }

    private static byte[] prefix(byte[] input, int length) {
        byte[] out = new byte[Math.min(length, input.length)];
        System.arraycopy(input, 0, out, 0, out.length);
        return out;
    }
}
