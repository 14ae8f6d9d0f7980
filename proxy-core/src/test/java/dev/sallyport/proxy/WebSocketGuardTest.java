package dev.sallyport.proxy;

import static dev.sallyport.proxy.testing.WebSocketRig.next;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.WebSocketRig;
import dev.sallyport.proxy.testing.WsFrames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import okhttp3.WebSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client sending a placeholder inside WebSocket messages (split across masked fragments, with a ping between)
 * gets the rule a request body gets: toward a host the secret is not bound to it is refused, the WebSocket closed
 * with 1008 and the refusal audited with the secret's name; the server never receives the whole placeholder.
 */
class WebSocketGuardTest {

    static final String PLACEHOLDER = "sallyport-ph-guardtestplaceholder001";
    static final String VALUE = "guard-real-value-0123456789abcdef";

    /** An upstream that collects every payload byte the client's frames carry until the connection closes. */
    static WebSocketRig rig(String boundTo, CompletableFuture<byte[]> received) throws Exception {
        return rig(boundTo, "forward", received);
    }

    /** {@code elsewhere}: the secret's {@code elsewhere_on_own_hosts}. */
    static WebSocketRig rig(String boundTo, String elsewhere, CompletableFuture<byte[]> received) throws Exception {
        return WebSocketRig.start("secrets:\n" + WebSocketRig.secret("TOKEN", VALUE, boundTo, PLACEHOLDER)
                + "    elsewhere_on_own_hosts: " + elsewhere + "\n", c -> {
            c.writeAtOnce(WsFrames.switching(c, ""));
            ByteArrayOutputStream payloads = new ByteArrayOutputStream();
            try {
                while (true) {
                    WsFrames.Frame f = WsFrames.read(c.in());
                    payloads.writeBytes(f.payload());
                    if (f.opcode() == WsFrames.TEXT && f.fin()) {
                        c.writeAtOnce(WsFrames.text(true, WsFrames.TEXT, "ok"));
                    }
                }
            } catch (IOException closed) {
                received.complete(payloads.toByteArray());
            }
        });
    }

    /** Writes {@code text} as masked fragments of 5 and 11 bytes, a masked ping after the first, flushing each. */
    static void sendFragmented(OutputStream out, String text) throws IOException {
        byte[] message = text.getBytes(StandardCharsets.UTF_8);
        int[] sizes = {5, 11};
        int pos = 0;
        for (int i = 0; pos < message.length; i++) {
            int n = Math.min(sizes[i % 2], message.length - pos);
            byte[] key = {(byte) (i * 31 + 7), (byte) (i * 17 + 3), (byte) 0xA5, (byte) i};
            out.write(WsFrames.masked(pos + n == message.length, pos == 0 ? WsFrames.TEXT : WsFrames.CONTINUATION,
                    Arrays.copyOfRange(message, pos, pos + n), key));
            if (i == 0) {
                out.write(WsFrames.masked(true, WsFrames.PING, "are you there".getBytes(StandardCharsets.US_ASCII),
                        new byte[] {9, 8, 7, 6}));
            }
            out.flush();
            pos += n;
        }
    }

    /**
     * A message's first fragment carries the whole placeholder and the client waits before sending the rest: the
     * check finds it only once the message goes on, so the fragment must wait too, never reach the server first.
     */
    @Test
    void aFragmentHoldingAPlaceholderWaitsForTheRestOfItsMessageAndNeverReachesTheServer() throws Exception {
        ByteArrayOutputStream live = new ByteArrayOutputStream();
        try (WebSocketRig rig = WebSocketRig.start("secrets:\n" + WebSocketRig.secret("TOKEN", VALUE, "elsewhere.test",
                PLACEHOLDER), c -> {
                    c.writeAtOnce(WsFrames.switching(c, ""));
                    try {
                        while (true) {
                            byte[] payload = WsFrames.read(c.in()).payload();
                            synchronized (live) {
                                live.writeBytes(payload);
                            }
                        }
                    } catch (IOException closed) {
                        // the proxy closed the connection
                    }
                }); SSLSocket s = rig.tunnel()) {
            assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
            OutputStream out = s.getOutputStream();
            out.write(WsFrames.masked(false, WsFrames.TEXT, ("{\"t\":\"" + PLACEHOLDER).getBytes(StandardCharsets.UTF_8),
                    new byte[] {1, 2, 3, 4}));
            out.flush();
            long end = System.nanoTime() + 1_000_000_000L;
            while (System.nanoTime() < end) {
                synchronized (live) {
                    assertThat(live.toString(StandardCharsets.UTF_8)).as("what the server read while the client waited")
                            .doesNotContain(PLACEHOLDER);
                }
                Thread.onSpinWait();
            }
            out.write(WsFrames.masked(true, WsFrames.CONTINUATION, "\"}".getBytes(StandardCharsets.UTF_8),
                    new byte[] {5, 6, 7, 8}));
            out.flush();
            WsFrames.Frame close = WsFrames.read(s.getInputStream());
            assertThat(close.closeCode()).isEqualTo(1008);
            rig.proxy.events.await("websocket_message", f -> "secret_wrong_host".equals(f.reason()));
        }
        synchronized (live) {
            assertThat(live.toString(StandardCharsets.UTF_8)).doesNotContain(PLACEHOLDER);
        }
    }

    @ParameterizedTest(name = "secret bound to {0}")
    @ValueSource(strings = {"elsewhere.test", WebSocketRig.HOST})
    void aPlaceholderInFragmentedMaskedFramesClosesTheWebSocketAndIsAudited(String boundTo) throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        // toward its own host only a secret that says elsewhere_on_own_hosts: refuse refuses it
        String reason = boundTo.equals(WebSocketRig.HOST) ? "secret_wrong_place" : "secret_wrong_host";
        try (WebSocketRig rig = rig(boundTo, "refuse", received); SSLSocket s = rig.tunnel()) {
            assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
            sendFragmented(s.getOutputStream(), "hello");
            assertThat(WsFrames.read(s.getInputStream()).text()).as("a message without it passes").isEqualTo("ok");
            sendFragmented(s.getOutputStream(), "{\"note\":\"my token is " + PLACEHOLDER + " thanks\"}");
            WsFrames.Frame close = WsFrames.read(s.getInputStream());
            assertThat(close.opcode()).isEqualTo(WsFrames.CLOSE);
            assertThat(close.closeCode()).isEqualTo(1008);
            assertThat(new String(close.payload(), 2, close.payload().length - 2, StandardCharsets.US_ASCII))
                    .isEqualTo(reason);
            assertThat(s.getInputStream().read()).isEqualTo(-1);
            String upstreamGot = new String(received.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            assertThat(upstreamGot).startsWith("hello").doesNotContain(PLACEHOLDER);
            AuditFields refusal = rig.proxy.events.await("websocket_message", f -> true);
            assertThat(refusal.decision()).isEqualTo("deny");
            assertThat(refusal.reason()).isEqualTo(reason);
            assertThat(refusal.secrets()).containsExactly("TOKEN");
            AuditFields end = rig.proxy.events.await("websocket_end", f -> true);
            assertThat(end.reason()).isEqualTo(reason);
            assertThat(end.secrets()).containsExactly("TOKEN");
        }
    }

    @Test
    void aPlaceholderInAMessageToItsOwnHostGoesOnUnchangedAndTheEndRecordNamesIt() throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        try (WebSocketRig rig = rig(WebSocketRig.HOST, received)) {
            try (SSLSocket s = rig.tunnel()) {
                assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
                sendFragmented(s.getOutputStream(), "{\"note\":\"my token is " + PLACEHOLDER + " thanks\"}");
                sendFragmented(s.getOutputStream(), "hello");   // answered only once the message before it went on
                assertThat(WsFrames.read(s.getInputStream()).text()).isEqualTo("ok");
            }
            String upstreamGot = new String(received.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            assertThat(upstreamGot).as("the placeholder as sent (the ping's payload between), never the value")
                    .contains("my token is " + PLACEHOLDER + " thanks").doesNotContain(VALUE);
            AuditFields end = rig.proxy.events.await("websocket_end", f -> true);
            assertThat(end.decision()).isEqualTo("allow");
            assertThat(end.placeholdersForwarded()).containsExactly("TOKEN");
        }
    }

    @Test
    void aRealClientSendingAPlaceholderToAnotherHostIsClosedWith1008() throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        try (WebSocketRig rig = rig("elsewhere.test", received)) {
            BlockingQueue<String> events = WebSocketRig.events();
            WebSocket ws = rig.open("/ws", events);
            assertThat(next(events)).isEqualTo("open");
            ws.send("Authorization: Bearer " + PLACEHOLDER);
            assertThat(next(events)).isEqualTo("closing:1008:secret_wrong_host");
            assertThat(new String(received.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8))
                    .doesNotContain(PLACEHOLDER);
            rig.proxy.events.await("websocket_message", f -> "secret_wrong_host".equals(f.reason())
                    && List.of("TOKEN").equals(f.secrets()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"unmasked", "reserved bits"})
    void aClientFrameTheProxyCannotReadClosesTheWebSocketWith1002(String fault) throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        try (WebSocketRig rig = rig("elsewhere.test", received); SSLSocket s = rig.tunnel()) {
            assertThat(WebSocketTestSupport.upgrade(s, rig)).startsWith("HTTP/1.1 101");
            byte[] payload = PLACEHOLDER.getBytes(StandardCharsets.US_ASCII);
            s.getOutputStream().write(fault.equals("unmasked") ? WsFrames.frame(true, WsFrames.TEXT, payload)
                    : WsFrames.frame(true, 4, WsFrames.TEXT, payload, new byte[] {1, 2, 3, 4}));
            WsFrames.Frame close = WsFrames.read(s.getInputStream());
            assertThat(close.closeCode()).isEqualTo(1002);
            assertThat(received.get(10, TimeUnit.SECONDS)).isEmpty();
        }
    }
}
