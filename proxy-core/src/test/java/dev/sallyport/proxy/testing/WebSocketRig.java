package dev.sallyport.proxy.testing;

import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import okio.ByteString;

/**
 * A proxy in front of a {@link ScriptedUpstream} named {@value #HOST} (TLS, per-run PKI), with one rule allowing it
 * and the secrets a test gives; clients are OkHttp's WebSocket or a raw {@link TunnelClient}.
 */
public final class WebSocketRig implements AutoCloseable {

    public static final String HOST = "upstream.test";

    public final Path dir = ProxyFixture.tempDir();
    public final TestPki pki;
    public final ScriptedUpstream upstream;
    public final ProxyFixture proxy;
    public final Trust trust;
    private final OkHttpClient client;

    private WebSocketRig(String secrets, ScriptedUpstream.Script script) throws Exception {
        pki = TestPki.create();
        upstream = ScriptedUpstream.https(pki.issue(HOST), script);
        String rules = "  - name: upstream\n    hosts: [" + HOST + "]\n    ports: [" + upstream.port() + "]\n" + secrets;
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), HOST + ":" + upstream.port(), "", rules),
                new MapResolver().map(HOST, "127.0.0.1"), dir);
        trust = Trust.of(proxy.caPem);
        client = new OkHttpClient.Builder().proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                .readTimeout(Duration.ofSeconds(20)).build();
    }

    /** {@code secrets} is a {@code secrets:} block (or empty); see {@link #secret}. */
    public static WebSocketRig start(String secrets, ScriptedUpstream.Script script) throws Exception {
        return new WebSocketRig(secrets, script);
    }

    /** One secret entry (after a {@code secrets:} line) whose value is written to a new file. */
    public static String secret(String name, String value, String host, String placeholder) throws IOException {
        Path file = ProxyFixture.tempDir().resolve(name + ".value");
        Files.writeString(file, value + "\n");
        return "  - name: " + name + "\n    from: file:" + file + "\n    hosts: [" + host + "]\n"
                + "    headers: [Authorization]\n    placeholder: " + placeholder + "\n";
    }

    /**
     * Opens {@code wss://HOST:port/path} with OkHttp; what happens arrives in {@code events} as {@code open},
     * {@code text:...}, {@code binary:HEX}, {@code closing:CODE:REASON}, {@code closed:CODE} or {@code failure:...}.
     */
    public WebSocket open(String path, BlockingQueue<String> events) {
        return client.newWebSocket(new Request.Builder().url("wss://" + HOST + ":" + upstream.port() + path).build(),
                listener(events));
    }

    /** An OkHttp listener that records what happens as {@link #open} describes, answering a close with a close. */
    public static WebSocketListener listener(BlockingQueue<String> events) {
        return new WebSocketListener() {
            @Override
            public void onOpen(WebSocket ws, Response response) {
                events.add("open");
            }

            @Override
            public void onMessage(WebSocket ws, String text) {
                events.add("text:" + text);
            }

            @Override
            public void onMessage(WebSocket ws, ByteString bytes) {
                events.add("binary:" + bytes.hex());
            }

            @Override
            public void onClosing(WebSocket ws, int code, String reason) {
                events.add("closing:" + code + ":" + reason);
                ws.close(code == 1005 ? 1000 : code, null);
            }

            @Override
            public void onClosed(WebSocket ws, int code, String reason) {
                events.add("closed:" + code);
            }

            @Override
            public void onFailure(WebSocket ws, Throwable t, Response response) {
                events.add("failure:" + t + (response == null ? "" : " status=" + response.code()));
            }
        };
    }

    /** The next event within 10 s, or {@code "<none>"}. */
    public static String next(BlockingQueue<String> events) throws InterruptedException {
        String e = events.poll(10, TimeUnit.SECONDS);
        return e == null ? "<none>" : e;
    }

    public static BlockingQueue<String> events() {
        return new LinkedBlockingQueue<>();
    }

    /** A raw client inside a tunnel to the upstream, TLS done. */
    public SSLSocket tunnel() throws IOException {
        return TunnelClient.open(proxy.address(), HOST, upstream.port(), trust);
    }

    public int port() {
        return upstream.port();
    }

    @Override
    public void close() throws IOException {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
        proxy.close();
        upstream.close();
    }
}
