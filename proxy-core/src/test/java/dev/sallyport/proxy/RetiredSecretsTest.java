package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.ScriptedUpstream;
import dev.sallyport.proxy.testing.WebSocketRig;
import dev.sallyport.proxy.testing.WsFrames;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.WebSocket;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A value injected before a reload that removed its secret (or changed its value) must stay scrubbed: the upstream
 * kept the token it was sent and echoes it back later, in a response header, the body and a WebSocket message.
 */
class RetiredSecretsTest {

    static final String HOST = WebSocketRig.HOST;
    static final String OLD = "old-real-value-0123456789abcdef";
    static final String NEW = "new-real-value-fedcba9876543210";
    static final String PLACEHOLDER = "sallyport-ph-retiredtestplaceholder1";

    @ParameterizedTest(name = "reloaded to: {0}")
    @ValueSource(strings = {"no secret", "a changed value"})
    void anUpstreamSendingBackAValueInjectedBeforeTheReloadIsScrubbed(String after) throws Exception {
        AtomicReference<String> kept = new AtomicReference<>("none");
        TestPki pki = TestPki.create();
        Path dir = ProxyFixture.tempDir();
        Path policyDir = ProxyFixture.tempDir();
        Path valueFile = policyDir.resolve("value");
        Files.writeString(valueFile, OLD + "\n");
        try (ScriptedUpstream upstream = ScriptedUpstream.https(pki.issue(HOST), c -> {
            String auth = c.header("Authorization");
            if (auth != null && auth.startsWith("Bearer ")) {
                kept.set(auth.substring(7));     // what a logging or malicious backend does with a token
            }
            String leak = "leak=" + kept.get() + " end.";
            if (c.head().startsWith("GET /ws ")) {
                c.writeAtOnce(WsFrames.switching(c, ""), WsFrames.text(true, WsFrames.TEXT, leak));
                WsFrames.Frame close = WsFrames.read(c.in());
                c.writeAtOnce(WsFrames.close(close.closeCode(), null));
                return;
            }
            byte[] body = leak.getBytes(StandardCharsets.UTF_8);
            c.writeAtOnce(("HTTP/1.1 200 OK\r\nX-Leak: " + leak + "\r\nContent-Length: " + body.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1), body);
        })) {
            String rules = "  - name: upstream\n    hosts: [" + HOST + "]\n    ports: [" + upstream.port() + "]\n";
            String secret = "secrets:\n  - name: TOKEN\n    from: file:" + valueFile + "\n    hosts: [" + HOST + "]\n"
                    + "    headers: [Authorization]\n    placeholder: " + PLACEHOLDER + "\n";
            String base = ProxyFixture.policy(pki.rootPem(dir), HOST + ":" + upstream.port(), "", rules);
            try (ProxyFixture proxy = ProxyFixture.startFromFile(base + secret, policyDir.resolve("policy.yaml"),
                    new MapResolver().map(HOST, "127.0.0.1"), dir)) {
                Trust trust = Trust.of(proxy.caPem);
                OkHttpClient client = new OkHttpClient.Builder()
                        .proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                        .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                        .readTimeout(Duration.ofSeconds(20)).build();
                String url = "https://" + HOST + ":" + upstream.port();
                try (Response first = client.newCall(new Request.Builder().url(url + "/first")
                        .header("Authorization", "Bearer " + PLACEHOLDER).build()).execute()) {
                    assertThat(first.body().string()).doesNotContain(OLD).contains("[sallyport:redacted]");
                }
                assertThat(kept.get()).as("the upstream got the real value").isEqualTo(OLD);

                if (after.equals("no secret")) {
                    proxy.reload(base);
                } else {
                    Files.writeString(valueFile, NEW + "\n");
                    proxy.reload(base + secret);
                }

                SoftAssertions softly = new SoftAssertions();    // head, body and WebSocket each fail on their own
                try (Response later = client.newCall(new Request.Builder().url(url + "/later").build()).execute()) {
                    softly.assertThat(later.header("X-Leak")).as("head").startsWith("leak=").doesNotContain(OLD)
                            .contains("[sallyport:redacted]");
                    softly.assertThat(later.body().string()).as("body").startsWith("leak=").endsWith(" end.")
                            .doesNotContain(OLD).contains("[sallyport:redacted]");
                }
                BlockingQueue<String> events = WebSocketRig.events();
                WebSocket ws = client.newWebSocket(new Request.Builder().url("wss://" + HOST + ":" + upstream.port()
                        + "/ws").build(), WebSocketRig.listener(events));
                assertThat(WebSocketRig.next(events)).isEqualTo("open");
                softly.assertThat(WebSocketRig.next(events)).as("WebSocket message").startsWith("text:leak=")
                        .endsWith(" end.").doesNotContain(OLD).contains("[sallyport:redacted]");
                softly.assertAll();
                ws.close(1000, null);
                assertThat(WebSocketRig.next(events)).isEqualTo("closing:1000:");
                proxy.events.await("websocket_end", f -> true);
                client.dispatcher().executorService().shutdown();
                client.connectionPool().evictAll();
            }
            assertThat(upstream.failures).isEmpty();
        }
    }
}
