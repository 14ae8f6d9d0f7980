package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 14 item 1): an agent resends its whole conversation with every LLM request, so once the
 * placeholder is in it (the agent ran {@code env}), the body of every later request carries it, and the proxy refused
 * each one {@code secret_wrong_place}: the run was dead. Here an agent-shaped client (the JDK's HttpClient through
 * the proxy, a streaming chat request: POST, chunked JSON body with the placeholder in it, the key's placeholder in
 * {@code Authorization}) talks to an LLM-shaped upstream over intercepted TLS that answers with server-sent events one
 * at a time. Toward the secret's own host the request goes on with the real key in the header and the placeholder in
 * the body unchanged, the answer streams, and the audit names the forwarded placeholder; the same body toward another
 * allowed host is refused {@code secret_wrong_host} and reaches nothing.
 */
class AgentChatStreamTest {

    static final String KEY = "sk-llm-real-key-0123456789abcdefXYZ";

    static LenientUpstream llm;
    static SallyportProxy proxy;
    static RecordingListener events = new RecordingListener();
    static HttpClient client;
    static String placeholder;
    /** Counted down by the client after it read the first event: the upstream sends the rest only then. */
    static volatile CountDownLatch firstEventRead = new CountDownLatch(1);

    @BeforeAll
    static void start() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        TestPki.Issued cert = pki.issue("llm.test", "other-llm.test");
        llm = LenientUpstream.https(cert.key(), cert.chain(), AgentChatStreamTest::stream);
        Path keyFile = Files.writeString(dir.resolve("llm-key"), KEY + "\n");
        String yaml = ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + llm.port(), "",
                        "  - name: llm\n    hosts: [llm.test, other-llm.test]\n    ports: [" + llm.port() + "]\n"
                                + "    methods: [POST]\n")
                .replace("AUDIT_PATH", dir.resolve("audit.jsonl").toString())
                + "secrets:\n  - name: LLM_API_KEY\n    from: file:" + keyFile + "\n    hosts: [llm.test]\n"
                + "    headers: [Authorization]\n";
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Agent Test CA");
        Path caPem = dir.resolve("proxy-ca.pem");
        Files.write(caPem, CaExport.pem(ca, false));
        proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "agent-test.yaml")).withCa(ca)
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0)).withListener(events)
                .withResolver(new MapResolver().map("llm.test", "127.0.0.1").map("other-llm.test", "127.0.0.1"))
                .withPlaceholders(Placeholders.ephemeral()));
        placeholder = proxy.secrets().placeholders().get("LLM_API_KEY");
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxy.address().getPort())))
                .sslContext(Trust.of(caPem).context).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        client.close();
        proxy.close();
        llm.close();
    }

    /** The LLM: three server-sent events, chunked; the second and third only after the client read the first. */
    static void stream(LenientUpstream.Received request, LenientUpstream.Conversation c) throws IOException {
        c.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        c.write(chunk("data: {\"delta\":\"Hel\"}\n\n"));
        try {
            if (!firstEventRead.await(10, TimeUnit.SECONDS)) {
                throw new IOException("the client never read the first event: the proxy held it back");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        c.write(chunk("data: {\"delta\":\"lo\"}\n\n"));
        c.write(chunk("data: [DONE]\n\n"));
        c.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    static byte[] chunk(String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        byte[] head = (Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + b.length + 2];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(b, 0, out, head.length, b.length);
        out[out.length - 2] = '\r';
        out[out.length - 1] = '\n';
        return out;
    }

    /** The conversation so far, as an agent resends it: the tool output that printed the environment is in it. */
    static String conversation() {
        StringBuilder history = new StringBuilder("{\"model\":\"m\",\"stream\":true,\"messages\":[");
        for (int i = 0; i < 200; i++) {
            history.append("{\"role\":\"user\",\"content\":\"step ").append(i).append(": ").append("x".repeat(300))
                    .append("\"},");
        }
        history.append("{\"role\":\"tool\",\"content\":\"HOME=/home/agent\\nLLM_API_KEY=").append(placeholder)
                .append("\\nPATH=/usr/bin\"},{\"role\":\"user\",\"content\":\"what next?\"}]}");
        return history.toString();
    }

    static HttpRequest chat(String host, String body) {
        // an InputStream of unknown length: the client sends the body chunked, in parts
        return HttpRequest.newBuilder(URI.create("https://" + host + ":" + llm.port() + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + placeholder)
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8))))
                .build();
    }

    @Test
    void aStreamingChatWhoseBodyCarriesThePlaceholderGoesThroughToItsOwnHost() throws Exception {
        firstEventRead = new CountDownLatch(1);
        String body = conversation();
        HttpResponse<Stream<String>> response = client.send(chat("llm.test", body),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream");
        Iterator<String> lines = response.body().iterator();
        assertThat(lines.next()).as("the first event arrives before the upstream sent the rest")
                .isEqualTo("data: {\"delta\":\"Hel\"}");
        firstEventRead.countDown();
        StringBuilder rest = new StringBuilder();
        lines.forEachRemaining(l -> rest.append(l).append('\n'));
        assertThat(rest.toString()).contains("data: {\"delta\":\"lo\"}").contains("data: [DONE]");

        LenientUpstream.Received got = llm.received().stream()
                .filter(r -> r.requestLine().startsWith("POST /v1/chat/completions ")
                        && r.header("Host").startsWith("llm.test:"))
                .findFirst().orElseThrow();
        assertThat(got.header("Authorization")).as("the real key, in the listed header").isEqualTo("Bearer " + KEY);
        assertThat(got.header("Transfer-Encoding")).isEqualTo("chunked");
        assertThat(new String(got.body(), StandardCharsets.UTF_8)).as("the body exactly as the agent sent it")
                .isEqualTo(body);
        assertThat(llm.rawReceived()).as("the key went nowhere but the header").containsOnlyOnce(KEY);

        AuditFields audited = events.await("exchange", f -> "/v1/chat/completions".equals(f.path())
                && "llm.test".equals(f.host()));
        assertThat(audited.decision()).isEqualTo("allow");
        assertThat(audited.status()).isEqualTo(200);
        assertThat(audited.secrets()).containsExactly("LLM_API_KEY");
        assertThat(audited.placeholdersForwarded()).containsExactly("LLM_API_KEY");
    }

    @Test
    void theSameBodyTowardAnotherAllowedHostIsRefused() throws Exception {
        int before = (int) llm.received().stream().filter(r -> r.header("Host").startsWith("other-llm.test:")).count();
        String body = conversation();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://other-llm.test:" + llm.port()
                        + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8))))
                .build();
        HttpResponse<String> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException closedWhileSending) {
            response = null;    // the proxy may close before the client finished sending: the audit says why
        }
        if (response != null) {
            assertThat(response.statusCode()).isEqualTo(403);
            assertThat(response.headers().firstValue("X-Sallyport-Reason")).hasValue("secret_wrong_host");
        }
        AuditFields refused = events.await("exchange", f -> "other-llm.test".equals(f.host())
                && "secret_wrong_host".equals(f.reason()));
        assertThat(refused.decision()).isEqualTo("deny");
        assertThat(refused.secrets()).containsExactly("LLM_API_KEY");
        assertThat(llm.received().stream().filter(r -> r.header("Host").startsWith("other-llm.test:")).count())
                .as("no whole request reached the other host").isEqualTo(before);
    }
}
