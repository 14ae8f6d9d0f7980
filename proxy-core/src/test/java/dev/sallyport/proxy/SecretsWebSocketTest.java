package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import org.junit.jupiter.api.Test;

/**
 * Messages an upstream sends over an upgraded (WebSocket) connection are scrubbed of every real value: here a
 * WebSocket echo sends back the value of the secret bound to it. (The client sends the value itself only to have
 * it echoed; toward a host the secret is not bound to, that message would be refused, see WebSocketGuardTest.)
 */
class SecretsWebSocketTest {

    static final String VALUE = "ws-real-value-0123456789abcdef";

    @Test
    void aRealValueEchoedOverAWebSocketNeverReachesTheClient() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        Path valueFile = dir.resolve("value");
        Files.writeString(valueFile, VALUE + "\n");
        try (EchoUpstream upstream = EchoUpstream.https(pki.issue("upstream.test"))) {
            String rules = "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n"
                    + "secrets:\n  - name: OTHER\n    from: file:" + valueFile + "\n    hosts: [upstream.test]\n"
                    + "    headers: [Authorization]\n    placeholder: sallyport-ph-websockettestplaceholder\n";
            try (ProxyFixture proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir),
                    "upstream.test:" + upstream.port(), "", rules), new MapResolver().map("upstream.test", "127.0.0.1"),
                    dir)) {
                Trust trust = Trust.of(proxy.caPem);
                OkHttpClient client = new OkHttpClient.Builder()
                        .proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                        .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                        .readTimeout(Duration.ofSeconds(20)).build();
                BlockingQueue<String> messages = new ArrayBlockingQueue<>(10);
                WebSocket ws = client.newWebSocket(new Request.Builder()
                        .url("wss://upstream.test:" + upstream.port() + "/ws").build(), new WebSocketListener() {
                            @Override
                            public void onMessage(WebSocket webSocket, String text) {
                                messages.add(text);
                            }

                            @Override
                            public void onFailure(WebSocket webSocket, Throwable t, Response response) {
                                messages.add("failure: " + t);
                            }
                        });
                ws.send("token=" + VALUE + " end.");
                String echoed = messages.poll(10, TimeUnit.SECONDS);
                assertThat(echoed).startsWith("echo:token=").endsWith(" end.").doesNotContain(VALUE)
                        .contains("[sallyport:redacted]").hasSize(("echo:token=" + VALUE + " end.").length());
                ws.send("plain.");
                assertThat(messages.poll(10, TimeUnit.SECONDS)).isEqualTo("echo:plain.");
                ws.close(1000, "bye");
                proxy.events.await("websocket_end", f -> true);
                client.dispatcher().executorService().shutdown();
                client.connectionPool().evictAll();
            }
        }
    }
}
