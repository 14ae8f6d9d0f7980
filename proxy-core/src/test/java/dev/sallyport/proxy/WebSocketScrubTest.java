package dev.sallyport.proxy;

import static dev.sallyport.proxy.testing.WebSocketRig.next;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.WebSocketRig;
import dev.sallyport.proxy.testing.WsFrames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLSocket;
import okhttp3.WebSocket;
import org.junit.jupiter.api.Test;

/**
 * An upstream that splits a real value across WebSocket fragments on purpose (3- and 20-byte frames, pings
 * between them, every length form), compresses frames, or accepts an extension it was not offered: the value
 * never reaches the client, and what the proxy cannot read is never relayed.
 */
class WebSocketScrubTest {

    static final String VALUE = "ws-split-value-0123456789abcdefghij";
    static final String MARKER = "[sallyport:redacted]";

    static String secrets() throws IOException {
        return "secrets:\n" + WebSocketRig.secret("OTHER", VALUE, "elsewhere.test", "sallyport-ph-scrubtestplaceholder01");
    }

    /** {@code message} as fragments of {@code sizes} bytes in turn (text first, continuations, the last final). */
    static List<byte[]> fragments(byte[] message, int opcode, int... sizes) {
        List<byte[]> out = new ArrayList<>();
        int pos = 0;
        for (int i = 0; pos < message.length; i++) {
            int n = Math.min(sizes[i % sizes.length], message.length - pos);
            out.add(WsFrames.frame(pos + n == message.length, pos == 0 ? opcode : WsFrames.CONTINUATION,
                    Arrays.copyOfRange(message, pos, pos + n)));
            pos += n;
        }
        return out;
    }

    @Test
    void aValueSplitAcrossFragmentsWithPingsBetweenThemNeverReachesAClient() throws Exception {
        String text = "token=" + VALUE + " and again " + VALUE + " end";
        List<String> pongs = new CopyOnWriteArrayList<>();
        try (WebSocketRig rig = WebSocketRig.start(secrets(), c -> {
            List<byte[]> parts = new ArrayList<>();
            parts.add(WsFrames.switching(c, ""));
            List<byte[]> frags = fragments(text.getBytes(StandardCharsets.UTF_8), WsFrames.TEXT, 3, 20);
            for (int i = 0; i < frags.size(); i++) {
                parts.add(frags.get(i));
                if (i == 1) {       // a ping between fragments, itself carrying the value
                    parts.add(WsFrames.text(true, WsFrames.PING, "p:" + VALUE));
                }
            }
            for (byte[] p : parts) {    // one write per frame: the proxy sees the fragments as they come
                c.writeAtOnce(p);
            }
            pongs.add(WsFrames.read(c.in()).text());
            WsFrames.Frame close = WsFrames.read(c.in());
            c.writeAtOnce(WsFrames.close(close.closeCode(), null));
        })) {
            BlockingQueue<String> events = WebSocketRig.events();
            WebSocket ws = rig.open("/ws", events);
            assertThat(next(events)).isEqualTo("open");
            String got = next(events);
            assertThat(got).startsWith("text:token=").endsWith(" end").doesNotContain(VALUE).contains(MARKER)
                    .hasSize(("text:" + text).length());
            assertThat(got).doesNotContain(VALUE.substring(0, 12)).doesNotContain(VALUE.substring(VALUE.length() - 12));
            ws.close(1000, null);
            assertThat(next(events)).isEqualTo("closing:1000:");
            rig.proxy.events.await("websocket_end", f -> true);
            assertThat(pongs).singleElement().satisfies(p -> assertThat(p).startsWith("p:").doesNotContain(VALUE)
                    .contains(MARKER));
            assertThat(rig.upstream.failures).isEmpty();
        }
    }

    @Test
    void framesAreWrittenAgainAsOneMessageInEveryLengthFormWithControlFramesBetween() throws Exception {
        byte[] big = new byte[70_000];       // 64-bit length form
        Arrays.fill(big, (byte) 'x');
        byte[] value = VALUE.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(value, 0, big, 65_530, value.length);     // across the 64 KiB mark
        byte[] medium = ("m".repeat(180) + VALUE.substring(0, 10)).getBytes(StandardCharsets.UTF_8);  // 16-bit form
        byte[] rest = (VALUE.substring(10) + "!").getBytes(StandardCharsets.UTF_8);
        try (WebSocketRig rig = WebSocketRig.start(secrets(), c -> {
            c.writeAtOnce(WsFrames.switching(c, ""));
            c.writeAtOnce(WsFrames.frame(true, WsFrames.BINARY, big));
            c.writeAtOnce(WsFrames.frame(false, WsFrames.TEXT, medium), WsFrames.text(true, WsFrames.PONG, "pong"));
            c.writeAtOnce(WsFrames.frame(true, WsFrames.CONTINUATION, rest));
            c.writeAtOnce(WsFrames.frame(true, WsFrames.TEXT, new byte[0]));   // an empty message
            WsFrames.Frame close = WsFrames.read(c.in());
            c.writeAtOnce(WsFrames.close(close.closeCode(), null));
        }); SSLSocket s = rig.tunnel()) {
            assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
            byte[] first = readMessage(s, WsFrames.BINARY, new ArrayList<>());
            assertThat(first).hasSize(big.length);
            assertThat(new String(first, StandardCharsets.ISO_8859_1)).doesNotContain(VALUE).contains(MARKER);
            List<Integer> controls = new ArrayList<>();
            byte[] second = readMessage(s, WsFrames.TEXT, controls);
            assertThat(controls).as("the pong between the fragments").containsExactly(WsFrames.PONG);
            assertThat(new String(second, StandardCharsets.UTF_8)).startsWith("m".repeat(180)).endsWith("!")
                    .doesNotContain(VALUE.substring(0, 10)).hasSize(medium.length + rest.length);
            assertThat(readMessage(s, WsFrames.TEXT, controls)).isEmpty();
            s.getOutputStream().write(WsFrames.close(1000, new byte[] {1, 2, 3, 4}));
            assertThat(WsFrames.read(s.getInputStream()).closeCode()).isEqualTo(1000);
            assertThat(rig.upstream.failures).isEmpty();
        }
    }

    /** Reads frames until a message of {@code opcode} is complete; control frames between go to {@code controls}. */
    static byte[] readMessage(SSLSocket s, int opcode, List<Integer> controls) throws IOException {
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        boolean first = true;
        while (true) {
            WsFrames.Frame f = WsFrames.read(s.getInputStream());
            assertThat(f.masked()).as("server frames are unmasked").isFalse();
            assertThat(f.rsv()).isZero();
            if (f.opcode() >= WsFrames.CLOSE) {
                controls.add(f.opcode());
                continue;
            }
            assertThat(f.opcode()).isEqualTo(first ? opcode : WsFrames.CONTINUATION);
            first = false;
            payload.writeBytes(f.payload());
            if (f.fin()) {
                return payload.toByteArray();
            }
        }
    }

    @Test
    void aCompressedFrameFromTheServerClosesTheWebSocketWithoutReachingTheClient() throws Exception {
        byte[] deflated = {(byte) 0xf2, 0x48, (byte) 0xcd, (byte) 0xc9, (byte) 0xc9, 0x07, 0x00};
        try (WebSocketRig rig = WebSocketRig.start(secrets(), c -> {
            c.writeAtOnce(WsFrames.switching(c, ""), WsFrames.frame(true, 4, WsFrames.TEXT, deflated, null));
            c.in().readAllBytes();      // until the proxy closes
        }); SSLSocket s = rig.tunnel()) {
            assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
            WsFrames.Frame close = WsFrames.read(s.getInputStream());
            assertThat(close.opcode()).isEqualTo(WsFrames.CLOSE);
            assertThat(close.closeCode()).isEqualTo(1002);
            assertThat(new String(close.payload(), 2, close.payload().length - 2, StandardCharsets.US_ASCII))
                    .startsWith("reserved bits set");
            assertThat(s.getInputStream().read()).as("the proxy closes the connection").isEqualTo(-1);
            assertThat(rig.upstream.failures).isEmpty();
        }
    }

    @Test
    void extensionOffersAreRemovedAndA101AcceptingOneAnywayIsRefused() throws Exception {
        try (WebSocketRig rig = WebSocketRig.start(secrets(), c ->
                c.writeAtOnce(WsFrames.switching(c, "Sec-WebSocket-Extensions: permessage-deflate\r\n"),
                        WsFrames.text(true, WsFrames.TEXT, "never relayed")))) {
            BlockingQueue<String> events = WebSocketRig.events();
            rig.open("/ws", events);        // OkHttp offers permessage-deflate
            assertThat(next(events)).startsWith("failure:").contains("status=502");
            assertThat(rig.upstream.heads).singleElement().satisfies(h -> assertThat(h.toLowerCase(Locale.ROOT))
                    .contains("upgrade: websocket").doesNotContain("sec-websocket-extensions"));
            rig.proxy.events.await("exchange", f -> "websocket_extension_refused".equals(f.reason())
                    && Integer.valueOf(502).equals(f.status()));
        }
    }
}
