package dev.sallyport.benchmarks.soak;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * The soak's operations, each one client action through the proxy that checks its own answer and throws when it
 * is wrong: keep-alive requests over HTTP/1.1 and HTTP/2 clients that live the whole run, a new connection (CONNECT,
 * TLS, one request, close), a new host name (a certificate minted), 1 MiB up and down, a WebSocket conversation,
 * a denied CONNECT and a denied path, and a secret injected and scrubbed from the answer.
 */
final class SoakLoad {

    enum Op { KEEPALIVE_H1, KEEPALIVE_H2, NEW_CONNECTION, NEW_HOST, UPLOAD, DOWNLOAD, WEBSOCKET, DENIED_CONNECT,
        DENIED_PATH, SECRET }

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final int proxyPort;
    private final int upstreamPort;
    private final SSLContext tls;
    private final String placeholder;
    private final String secret;
    private final int hosts;
    private final AtomicInteger nextHost = new AtomicInteger();
    private final HttpClient h1;
    private final HttpClient h2;

    SoakLoad(int proxyPort, int upstreamPort, SSLContext tls, String placeholder, String secret, int hosts) {
        this.proxyPort = proxyPort;
        this.upstreamPort = upstreamPort;
        this.tls = tls;
        this.placeholder = placeholder;
        this.secret = secret;
        this.hosts = hosts;
        this.h1 = client(HttpClient.Version.HTTP_1_1);
        this.h2 = client(HttpClient.Version.HTTP_2);
    }

    int hostCount() {
        return hosts;
    }

    private HttpClient client(HttpClient.Version version) {
        return HttpClient.newBuilder().version(version).sslContext(tls).connectTimeout(TIMEOUT)
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxyPort))).build();
    }

    void run(Op op) throws Exception {
        switch (op) {
            case KEEPALIVE_H1 -> expect(get(h1, "api.soak.test", "/small"), 200, "ok");
            case KEEPALIVE_H2 -> expect(get(h2, "api.soak.test", "/small"), 200, "ok");
            case NEW_CONNECTION -> expectRaw(raw("api.soak.test", "/small"), "200", "ok");
            case NEW_HOST -> expectRaw(raw("h" + nextHost.getAndIncrement() % hosts + ".soak.test", "/small"), "200", "ok");
            case UPLOAD -> expect(h1.send(request("api.soak.test", "/upload")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(SoakUpstream.LARGE)).build(),
                    HttpResponse.BodyHandlers.ofString()), 200, String.valueOf(SoakUpstream.LARGE.length));
            case DOWNLOAD -> {
                HttpResponse<byte[]> r = h2.send(request("api.soak.test", "/large").build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                check(r.statusCode() == 200 && r.body().length == SoakUpstream.LARGE.length,
                        "download: " + r.statusCode() + ", " + r.body().length + " bytes");
            }
            case WEBSOCKET -> webSocket();
            case DENIED_CONNECT -> {
                String head = connect("denied.example.test");
                check(head.startsWith("HTTP/1.1 403"), "denied CONNECT answered: " + firstLine(head));
            }
            case DENIED_PATH -> {
                HttpResponse<String> r = get(h1, "api.soak.test", "/private/x");
                check(r.statusCode() == 403, "denied path answered " + r.statusCode());
            }
            case SECRET -> {
                HttpResponse<String> r = h1.send(request("api.soak.test", "/echo-auth")
                        .header("Authorization", "Bearer " + placeholder).build(), HttpResponse.BodyHandlers.ofString());
                check(r.statusCode() == 200 && r.body().startsWith("auth=") && !r.body().contains(secret),
                        "secret: " + r.statusCode() + (r.body().contains(secret) ? ", the real value came back" : ""));
            }
        }
    }

    private HttpRequest.Builder request(String host, String path) {
        return HttpRequest.newBuilder(URI.create("https://" + host + ":" + upstreamPort + path)).timeout(TIMEOUT);
    }

    private HttpResponse<String> get(HttpClient client, String host, String path) throws Exception {
        return client.send(request(host, path).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void expect(HttpResponse<String> r, int status, String body) {
        check(r.statusCode() == status && r.body().equals(body),
                r.uri().getPath() + ": " + r.statusCode() + " '" + abbreviate(r.body()) + "'");
    }

    private void webSocket() throws Exception {
        CompletableFuture<String> all = new CompletableFuture<>();
        StringBuilder got = new StringBuilder();
        int messages = 5;
        WebSocket ws = h1.newWebSocketBuilder().connectTimeout(TIMEOUT)
                .buildAsync(URI.create("wss://api.soak.test:" + upstreamPort + "/ws"), new WebSocket.Listener() {
                    private int seen;

                    @Override
                    public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
                        got.append(data);
                        if (last && ++seen == messages) {
                            all.complete(got.toString());
                        }
                        socket.request(1);
                        return null;
                    }

                    @Override
                    public void onError(WebSocket socket, Throwable error) {
                        all.completeExceptionally(error);
                    }
                }).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        StringBuilder sent = new StringBuilder();
        for (int i = 0; i < messages; i++) {
            String m = "message-" + i + ";";
            sent.append(m);
            ws.sendText(m, true).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        String echoed = all.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        check(echoed.contentEquals(sent), "websocket echoed '" + abbreviate(echoed) + "'");
    }

    /** CONNECT, then TLS to {@code host} and one request with {@code Connection: close}; the whole answer. */
    private String raw(String host, String path) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", proxyPort), (int) TIMEOUT.toMillis());
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            String head = connectOn(socket, host);
            check(head.startsWith("HTTP/1.1 200"), "CONNECT " + host + ": " + firstLine(head));
            try (SSLSocket tunnel = (SSLSocket) tls.getSocketFactory().createSocket(socket, host, upstreamPort, true)) {
                tunnel.startHandshake();
                OutputStream out = tunnel.getOutputStream();
                out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + upstreamPort
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                return new String(tunnel.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            }
        }
    }

    private String connect(String host) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", proxyPort), (int) TIMEOUT.toMillis());
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            return connectOn(socket, host);
        }
    }

    private String connectOn(Socket socket, String host) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(("CONNECT " + host + ":" + upstreamPort + " HTTP/1.1\r\nHost: " + host + ":" + upstreamPort
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return readHead(socket.getInputStream());
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4 && head.size() < 16_384) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static void expectRaw(String response, String status, String body) {
        int end = response.indexOf("\r\n\r\n");
        String head = end < 0 ? response : response.substring(0, end);
        String rest = end < 0 ? "" : response.substring(end + 4);
        if (head.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked")) {
            rest = dechunk(rest);
        }
        check(head.startsWith("HTTP/1.1 " + status) && rest.equals(body),
                "raw: " + firstLine(head) + " '" + abbreviate(rest) + "'");
    }

    private static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < body.length()) {
            int eol = body.indexOf("\r\n", i);
            if (eol < 0) {
                break;
            }
            int size = Integer.parseInt(body.substring(i, eol).split(";")[0].strip(), 16);
            if (size == 0) {
                break;
            }
            out.append(body, eol + 2, eol + 2 + size);
            i = eol + 2 + size + 2;
        }
        return out.toString();
    }

    private static String firstLine(String text) {
        int eol = text.indexOf('\r');
        return eol < 0 ? text : text.substring(0, eol);
    }

    private static String abbreviate(String text) {
        return text.length() > 80 ? text.substring(0, 80) + "..." : text;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }
}
