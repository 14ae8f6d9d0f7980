package dev.sallyport.proxy.websocket;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.WsFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Byte-exact framing: every length form, masks across chunk boundaries, interleaved control frames, refusals. */
class FrameReaderTest {

    /** Records what the reader reports as text lines. */
    static final class Recording implements FrameSink {
        final List<String> events = new ArrayList<>();
        final ByteArrayOutputStream payload = new ByteArrayOutputStream();

        @Override
        public void messageStart(int opcode) {
            events.add("start " + opcode);
        }

        @Override
        public void payload(ByteBuf bytes) {
            assertThat(bytes.isReadable()).isTrue();
            payload.writeBytes(ByteBufUtil.getBytes(bytes));
            bytes.release();
        }

        @Override
        public void messageEnd() {
            events.add("end " + payload.size());
        }

        @Override
        public void control(int opcode, ByteBuf p) {
            events.add("control " + opcode + " " + ByteBufUtil.hexDump(p));
            p.release();
        }
    }

    /** Feeds {@code bytes} in chunks of {@code chunk}; the first refusal, or null. */
    static ProtocolError feed(FrameReader reader, FrameSink sink, byte[] bytes, int chunk) {
        for (int pos = 0; pos < bytes.length; pos += chunk) {
            ByteBuf b = Unpooled.wrappedBuffer(Arrays.copyOfRange(bytes, pos, Math.min(bytes.length, pos + chunk)));
            try {
                ProtocolError e = reader.feed(b, sink);
                if (e != null) {
                    return e;
                }
                assertThat(b.readerIndex()).as("feed leaves the buffer alone").isZero();
            } finally {
                b.release();
            }
        }
        return null;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @ParameterizedTest(name = "chunks of {0}")
    @ValueSource(ints = {1, 2, 3, 7, 100_000})
    void maskedFragmentsInEveryLengthFormWithAPingBetweenAreOneMessage(int chunk) {
        byte[] a = "abc".getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[300];
        Arrays.fill(b, (byte) 'b');
        byte[] c = new byte[70_000];
        Arrays.fill(c, (byte) 'c');
        byte[] key1 = {1, 2, 3, 4};
        byte[] key2 = {(byte) 0xff, 0, 0x55, 0x12};
        byte[] stream = concat(WsFrames.masked(false, WsFrames.TEXT, a, key1),
                WsFrames.masked(true, WsFrames.PING, "hi".getBytes(StandardCharsets.US_ASCII), key2),
                WsFrames.masked(false, WsFrames.CONTINUATION, b, key2),
                WsFrames.masked(false, WsFrames.CONTINUATION, new byte[0], key1),
                WsFrames.masked(true, WsFrames.CONTINUATION, c, key1),
                WsFrames.masked(true, WsFrames.BINARY, new byte[0], key2));
        Recording sink = new Recording();
        assertThat(feed(new FrameReader(FrameReader.Sender.CLIENT), sink, stream, chunk)).isNull();
        assertThat(sink.events).containsExactly("start 1", "control 9 6869", "end 70303", "start 2", "end 70303");
        assertThat(sink.payload.toByteArray()).isEqualTo(concat(a, b, c));
    }

    @Test
    void serverFramesAreReadUnmasked() {
        Recording sink = new Recording();
        byte[] stream = concat(WsFrames.text(true, WsFrames.TEXT, "one"), WsFrames.close(1000, null));
        assertThat(feed(new FrameReader(FrameReader.Sender.SERVER), sink, stream, 1)).isNull();
        assertThat(sink.events).containsExactly("start 1", "end 3", "control 8 03e8");
    }

    @Test
    void whatCannotBeReadIsRefusedWith1002AndNothingAfterIsRead() {
        byte[] key = {1, 2, 3, 4};
        byte[] p = "x".getBytes(StandardCharsets.US_ASCII);
        List<byte[]> bad = List.of(
                WsFrames.frame(true, 4, WsFrames.TEXT, p, key),                 // compressed (RSV1)
                WsFrames.frame(true, 0, 3, p, key),                             // reserved opcode
                WsFrames.frame(true, WsFrames.TEXT, p),                         // a client frame unmasked
                WsFrames.masked(false, WsFrames.PING, p, key),                  // fragmented control frame
                WsFrames.masked(true, WsFrames.PING, new byte[126], key),       // oversized control frame
                WsFrames.masked(true, WsFrames.CONTINUATION, p, key),           // continuation of nothing
                concat(WsFrames.masked(false, WsFrames.TEXT, p, key), WsFrames.masked(true, WsFrames.TEXT, p, key)));
        for (byte[] stream : bad) {
            Recording sink = new Recording();
            FrameReader reader = new FrameReader(FrameReader.Sender.CLIENT);
            ProtocolError e = feed(reader, sink, stream, 1);
            assertThat(e).as(ByteBufUtil.hexDump(stream)).isNotNull();
            assertThat(e.code()).isEqualTo(1002);
            assertThat(feed(reader, sink, WsFrames.masked(true, WsFrames.TEXT, p, key), 10)).isEqualTo(e);
        }
        Recording sink = new Recording();
        assertThat(feed(new FrameReader(FrameReader.Sender.SERVER), sink, WsFrames.masked(true, WsFrames.TEXT, p, key),
                1).reason()).startsWith("masked frame from the server");
    }

    @Test
    void aLengthWithTheTopBitSetIsRefused() {
        byte[] stream = {(byte) 0x82, 127, (byte) 0x80, 0, 0, 0, 0, 0, 0, 1};
        ProtocolError e = feed(new FrameReader(FrameReader.Sender.SERVER), new Recording(), stream, 1);
        assertThat(e.code()).isEqualTo(1009);
    }
}
