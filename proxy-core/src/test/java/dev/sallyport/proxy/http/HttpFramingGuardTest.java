package dev.sallyport.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Limits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The guard's state machine across read boundaries: every split of a message gives the same verdict. */
class HttpFramingGuardTest {

    private static final Limits LIMITS = new Limits(100, 100, 4096, 1024, 1000);

    static List<Object> feed(String request, int piece) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpFramingGuard(LIMITS, Duration.ofSeconds(30)));
        byte[] bytes = request.getBytes(StandardCharsets.ISO_8859_1);
        for (int i = 0; i < bytes.length; i += piece) {
            ch.writeInbound(Unpooled.copiedBuffer(bytes, i, Math.min(piece, bytes.length - i)));
        }
        List<Object> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add(o);
        }
        ch.finishAndReleaseAll();
        return out;
    }

    static String bytes(List<Object> out) {
        StringBuilder sb = new StringBuilder();
        for (Object o : out) {
            if (o instanceof ByteBuf b) {
                sb.append(b.toString(StandardCharsets.ISO_8859_1));
                b.release();
            }
        }
        return sb.toString();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 7, 64, 4096})
    void validPipelinedMessagesPassUnchangedWhateverTheSplit(int piece) {
        String request = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;x=y\r\nhello\r\n1A\r\n" + "z".repeat(26) + "\r\n0\r\nTrailer-A: 1\r\n\r\n"
                + "GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc"
                + "\r\nGET http://a.test/3 HTTP/1.1\r\nHost: a.test\r\n\r\n";
        List<Object> out = feed(request, piece);
        assertThat(out).noneMatch(o -> o instanceof Violation);
        assertThat(bytes(out)).isEqualTo(request);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5, 4096})
    void faultsAreFoundWhateverTheSplit(int piece) {
        String smuggle = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc"
                + "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n0x1\r\n";
        List<Object> out = feed(smuggle, piece);
        assertThat(out.getLast()).isEqualTo(new Violation(400, "bad_chunk_size"));
        assertThat(bytes(out)).doesNotContain("0x1");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 4096})
    void aChunkedBodyOverTheCapIsRefusedBeforeItsDataPasses(int piece) {
        String big = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "3e8\r\n" + "a".repeat(1000) + "\r\n1\r\nb\r\n0\r\n\r\n";
        List<Object> out = feed(big, piece);
        assertThat(out.getLast()).isEqualTo(new Violation(413, "body_too_large"));
        assertThat(bytes(out)).doesNotContain("\r\nb\r\n");
    }

    /** Slowloris on the guard's own clock: a head still incomplete at its deadline is a 408, not a second earlier. */
    @org.junit.jupiter.api.Test
    void aHeadStillIncompleteAtItsDeadlineIs408OnTheChannelsClock() {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpFramingGuard(LIMITS, Duration.ofSeconds(30)));
        ch.freezeTime();    // the clock moves only when the test moves it, however slow the machine
        ch.writeInbound(Unpooled.copiedBuffer("GET http://a.test/ HTTP/1.1\r\nHost: a", StandardCharsets.US_ASCII));
        ch.advanceTimeBy(29_999, java.util.concurrent.TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        List<Object> before = drain(ch);
        assertThat(before).noneMatch(o -> o instanceof Violation);
        ch.writeInbound(Unpooled.copiedBuffer(".test\r\nX-Slow: 1", StandardCharsets.US_ASCII));
        ch.advanceTimeBy(2, java.util.concurrent.TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(drain(ch)).anySatisfy(o -> assertThat(o).isEqualTo(new Violation(408, "header_timeout")));
        ch.finishAndReleaseAll();
    }

    @org.junit.jupiter.api.Test
    void aHeadCompleteBeforeItsDeadlineIsNeverTimedOut() {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpFramingGuard(LIMITS, Duration.ofSeconds(30)));
        ch.freezeTime();
        ch.writeInbound(Unpooled.copiedBuffer("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
                StandardCharsets.US_ASCII));
        ch.advanceTimeBy(1, java.util.concurrent.TimeUnit.HOURS);
        ch.runScheduledPendingTasks();
        assertThat(drain(ch)).noneMatch(o -> o instanceof Violation);
        ch.finishAndReleaseAll();
    }

    private static List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add(o);
            if (o instanceof ByteBuf b) {
                b.release();
            }
        }
        return out;
    }
}
