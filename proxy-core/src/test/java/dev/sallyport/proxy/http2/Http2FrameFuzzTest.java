package dev.sallyport.proxy.http2;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;

/**
 * Fuzz target: a client's HTTP/2 bytes after the preface into the frame guard and Netty's frame codec (built as
 * Netty builds it, with the connection's last handler), as the client pipeline orders them. Invariants: nothing
 * escapes the pipeline unhandled; whether the connection stays open, and the guard's reason where it saw the
 * frames, do not depend on how the bytes were split into reads; and whenever the frames, counted here
 * independently, hold more WINDOW_UPDATE frames than the guard allows for the HEADERS frames before them, the
 * connection is closed. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/http2/Http2FrameFuzzTestInputs/}.
 */
class Http2FrameFuzzTest {

    private record Outcome(boolean open, String failure, int frames) {}

    @FuzzTest
    void floodsEndTheConnectionWhateverTheSplit(FuzzedDataProvider data) {
        int piece = data.consumeInt(1, 512);
        byte[] frames = data.consumeRemainingAsBytes();
        byte[] input = new byte[Http2CodecUtil.connectionPrefaceBuf().readableBytes() + frames.length];
        Http2CodecUtil.connectionPrefaceBuf().getBytes(0, input, 0, 24);
        System.arraycopy(frames, 0, input, 24, frames.length);

        Outcome whole = feed(input, input.length);
        Outcome split = feed(input, piece);
        // the frames handed on may differ: the guard judges each read whole before passing any of it
        assertThat(split.open()).as("open whatever the split").isEqualTo(whole.open());
        if (split.failure() != null) {    // split, the codec may close on an earlier frame before the guard sees more
            assertThat(whole.failure()).as("the guard's reason whatever the split").isEqualTo(split.failure());
        }
        if (flood(frames)) {
            assertThat(whole.open()).as("a WINDOW_UPDATE flood leaves the connection open").isFalse();
        }
    }

    private static Outcome feed(byte[] input, int piece) {
        Http2FrameGuard guard = new Http2FrameGuard(Duration.ofSeconds(30));
        int[] frames = new int[1];
        EmbeddedChannel ch = new EmbeddedChannel(guard, Http2FrameCodecBuilder.forServer().build(),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        frames[0]++;
                        ReferenceCountUtil.release(msg);
                    }
                }, Http2Connections.CONNECTION_ERRORS);
        try {
            for (int i = 0; i < input.length && ch.isOpen(); i += piece) {
                ch.writeInbound(Unpooled.copiedBuffer(input, i, Math.min(piece, input.length - i)));
                ch.checkException();
            }
            return new Outcome(ch.isActive(), guard.failure(), frames[0]);
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** Whether the frames, walked by their headers, ever hold more WINDOW_UPDATEs than 100 + 2 per HEADERS before. */
    private static boolean flood(byte[] frames) {
        long headers = 0;
        long updates = 0;
        int at = 0;
        while (at + 9 <= frames.length) {
            int length = ((frames[at] & 0xff) << 16) | ((frames[at + 1] & 0xff) << 8) | (frames[at + 2] & 0xff);
            int type = frames[at + 3] & 0xff;
            if (type == 0x1) {
                headers++;
            } else if (type == 0x8 && ++updates > Http2FrameGuard.WINDOW_UPDATE_ALLOWANCE + 2 * headers) {
                return true;
            }
            at += 9 + length;
        }
        return false;
    }
}
