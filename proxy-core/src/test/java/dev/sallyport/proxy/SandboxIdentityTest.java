package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.ScriptedUpstream;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Trust;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One proxy, two registered sandboxes, seen from the attacker's side: each identity (presented as its runner's relay
 * presents it, a PROXY v2 header with the registration's token) reaches only its own host and gets only its own
 * secret swapped; a placeholder of the other's is refused and never swapped; a connection without the header is
 * anonymous; an unknown token, a second PROXY header after the relay's and identity-looking request headers get
 * nothing, and each is audited.
 */
class SandboxIdentityTest {

    static final String VALUE_A = "value-of-a-7f3e1c";
    static final String VALUE_B = "value-of-b-2d9a44";
    static final String ADMIN = "admin-token-for-the-test-0123456789";
    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;
    static Map<String, String> a;
    static Map<String, String> b;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("a.test", "b.test", "shared.test");
        proxy = startShared(up, """
                  - {name: a-only, hosts: [a.test], ports: [PORT], clients: [sandbox-a]}
                  - {name: b-only, hosts: [b.test], ports: [PORT], clients: [sandbox-b]}
                  - {name: shared, hosts: [shared.test], ports: [PORT]}
                """);
        trust = Trust.of(proxy.caPem);
        a = register("sandbox-a", ADMIN);
        b = register("sandbox-b", ADMIN);
    }

    /**
     * A proxy for {@code up}'s a.test, b.test and shared.test with the admin token {@link #ADMIN}, {@code rules} (their
     * {@code PORT} the upstream's) and two secrets: {@code A_TOKEN} ({@link #VALUE_A}) for sandbox-a and
     * {@code B_TOKEN} ({@link #VALUE_B}) for sandbox-b, each for its own host and shared.test.
     */
    static ProxyFixture startShared(Upstreams up, String rules) throws Exception {
        Path secretA = Files.writeString(up.dir.resolve("a"), VALUE_A);
        Path secretB = Files.writeString(up.dir.resolve("b"), VALUE_B);
        Path token = Files.writeString(up.dir.resolve("admin-token"), ADMIN + "\n");
        int port = up.tls.port();
        String secrets = "secrets:\n"
                + "  - {name: A_TOKEN, from: 'file:" + secretA + "', hosts: [a.test, shared.test],"
                + " headers: [Authorization], clients: [sandbox-a]}\n"
                + "  - {name: B_TOKEN, from: 'file:" + secretB + "', hosts: [b.test, shared.test],"
                + " headers: [Authorization], clients: [sandbox-b]}\n";
        String allow = "a.test:" + port + ", b.test:" + port + ", shared.test:" + port;
        return ProxyFixture.start(ProxyFixture.policy(up.root, allow, "  admin_token: {file: " + token + "}\n",
                rules.replace("PORT", Integer.toString(port)) + secrets), new MapResolver()
                .map("a.test", "127.0.0.1").map("b.test", "127.0.0.1").map("shared.test", "127.0.0.1"), up.dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    /** POST /sandboxes: the answer's lines as name to value ("placeholder X" keyed by X). */
    static Map<String, String> register(String identity, String adminToken) throws Exception {
        return register(proxy, identity, adminToken);
    }

    /** The same with {@code on}'s admin listener. */
    static Map<String, String> register(ProxyFixture on, String identity, String adminToken) throws Exception {
        HttpResponse<String> r = admin(HttpRequest.newBuilder(adminUri(on, "/sandboxes?identity=" + identity))
                .header("Authorization", "Bearer " + adminToken).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        Map<String, String> out = new LinkedHashMap<>();
        r.body().lines().forEach(line -> {
            String[] f = line.split(" ");
            out.put(f[0].equals("placeholder") ? f[1] : f[0], f[f.length - 1]);
        });
        return out;
    }

    static URI adminUri(String path) {
        return adminUri(proxy, path);
    }

    static URI adminUri(ProxyFixture on, String path) {
        return URI.create("http://127.0.0.1:" + on.proxy.adminAddress().getPort() + path);
    }

    static HttpResponse<String> admin(HttpRequest.Builder request) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** The relay's header: PROXY v2, LOCAL, no addresses, the token TLV. */
    static byte[] identityHeader(String token) {
        byte[] t = token.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer h = ByteBuffer.allocate(16 + 3 + t.length);
        h.put(new byte[] {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20, 0x00});
        h.putShort((short) (3 + t.length)).put((byte) SandboxRegistry.TLV_TYPE).putShort((short) t.length).put(t);
        return h.array();
    }

    /**
     * Sends {@code prefix}, CONNECT host, TLS, one GET with {@code extra} header lines; the response, or the
     * CONNECT's refusal head, or "" when the proxy closed without an answer.
     */
    static String request(byte[] prefix, String host, String extra) throws IOException {
        int port = up.tls.port();
        try (Socket raw = new Socket("127.0.0.1", proxy.port())) {
            raw.setSoTimeout(10_000);
            String target = host + ":" + port;
            ByteArrayOutputStream first = new ByteArrayOutputStream();
            first.writeBytes(prefix);
            first.writeBytes(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + extra + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            raw.getOutputStream().write(first.toByteArray());
            String head;
            try {
                head = ScriptedUpstream.readHead(raw.getInputStream());
            } catch (IOException closed) {
                return "";
            }
            if (!head.startsWith("HTTP/1.1 200")) {
                return head;
            }
            try (SSLSocket tls = (SSLSocket) trust.context.getSocketFactory().createSocket(raw, host, port, true)) {
                SSLParameters params = tls.getSSLParameters();
                params.setServerNames(List.of(new SNIHostName(host)));
                tls.setSSLParameters(params);
                tls.getOutputStream().write(("GET /hello HTTP/1.1\r\nHost: " + target + "\r\n" + extra
                        + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                tls.getOutputStream().flush();
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                tls.getInputStream().transferTo(all);
                return all.toString(StandardCharsets.UTF_8);
            }
        }
    }

    static byte[] as(Map<String, String> sandbox) {
        return identityHeader(sandbox.get("token"));
    }

    @Test
    void eachSandboxReachesOnlyItsOwnHostWithOnlyItsOwnSecret() throws Exception {
        assertThat(a).containsKey("A_TOKEN").doesNotContainKey("B_TOKEN");
        assertThat(b).containsKey("B_TOKEN").doesNotContainKey("A_TOKEN");

        String answer = request(as(a), "a.test", "Authorization: Bearer " + a.get("A_TOKEN") + "\r\n");
        assertThat(answer).startsWith("HTTP/1.1 200").doesNotContain(VALUE_A);
        assertThat(up.tls.requests).anySatisfy(r -> assertThat(r).contains("Host=a.test:").contains(VALUE_A));
        AuditFields exchange = proxy.events.await("exchange", f -> "a.test".equals(f.host()));
        assertThat(exchange.identity()).isEqualTo("sandbox-a");
        assertThat(exchange.secrets()).containsExactly("A_TOKEN");

        assertThat(request(as(a), "b.test", "")).startsWith("HTTP/1.1 403");
        AuditFields refused = proxy.events.await("connect", f -> "b.test".equals(f.host())
                && "sandbox-a".equals(f.identity()));
        assertThat(refused.decision()).isEqualTo("deny");
        assertThat(refused.reason()).isEqualTo("client_not_allowed");

        assertThat(request(as(b), "b.test", "Authorization: Bearer " + b.get("B_TOKEN") + "\r\n"))
                .startsWith("HTTP/1.1 200");
        assertThat(up.tls.requests).anySatisfy(r -> assertThat(r).contains("Host=b.test:").contains(VALUE_B));
        assertThat(request(as(b), "a.test", "")).startsWith("HTTP/1.1 403");
    }

    @Test
    void theOtherSandboxsPlaceholderIsRefusedAuditedAndNeverSwapped() throws Exception {
        int before = up.tls.requests.size();
        String answer = request(as(a), "shared.test", "Authorization: Bearer " + b.get("B_TOKEN") + "\r\n");
        assertThat(answer).startsWith("HTTP/1.1 403").contains("secret_wrong_client");
        assertThat(up.tls.requests).hasSize(before);
        AuditFields refused = proxy.events.await("request", f -> "secret_wrong_client".equals(f.reason()));
        assertThat(refused.identity()).isEqualTo("sandbox-a");
        assertThat(refused.secrets()).containsExactly("B_TOKEN");

        assertThat(request(as(a), "shared.test", "Authorization: Bearer " + a.get("A_TOKEN") + "\r\n"))
                .startsWith("HTTP/1.1 200");
        assertThat(up.tls.requests).anySatisfy(r -> assertThat(r).contains("Host=shared.test:").contains(VALUE_A));
        assertThat(up.tls.requests).noneSatisfy(r -> assertThat(r).contains("Host=shared.test:").contains(VALUE_B));
    }

    @Test
    void aConnectionWithoutTheHeaderIsAnonymousAndGetsOnlyWhatNamesNoClient() throws Exception {
        assertThat(request(new byte[0], "a.test", "")).startsWith("HTTP/1.1 403");
        AuditFields refused = proxy.events.await("connect", f -> "a.test".equals(f.host())
                && "anonymous".equals(f.identity()));
        assertThat(refused.decision()).isEqualTo("deny");
        String answer = request(new byte[0], "shared.test", "Authorization: Bearer " + a.get("A_TOKEN") + "\r\n");
        assertThat(answer).startsWith("HTTP/1.1 403").contains("secret_wrong_client");
        assertThat(request(new byte[0], "shared.test", "")).startsWith("HTTP/1.1 200");
    }

    @Test
    void forgedIdentitiesGetNothingAndAreAudited() throws Exception {
        int before = up.tls.requests.size();
        String guessed = HexFormat.of().formatHex(new byte[32]);
        assertThat(request(identityHeader(guessed), "a.test", "")).isEmpty();
        proxy.events.await("connection", f -> "unknown_identity".equals(f.reason()));

        // the sandbox's own bytes after its relay's header: a second header naming the other sandbox
        byte[] twice = concat(as(a), as(b));
        assertThat(request(twice, "b.test", "")).isEmpty();
        AuditFields forged = proxy.events.await("connection", f -> "forged_proxy_header".equals(f.reason()));
        assertThat(forged.identity()).isEqualTo("sandbox-a");
        byte[] v1 = concat(as(a), "PROXY TCP4 127.0.0.1 127.0.0.1 1 2\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(request(v1, "b.test", "")).isEmpty();

        // headers that name the other sandbox change nothing: still sandbox-a, still refused
        assertThat(request(as(a), "b.test", "X-Sallyport-Identity: sandbox-b\r\nProxy-Authorization: Bearer "
                + b.get("token") + "\r\nForwarded: for=sandbox-b\r\n")).startsWith("HTTP/1.1 403");
        assertThat(up.tls.requests).hasSize(before);
    }

    @Test
    void registrationNeedsTheAdminTokenAndAForgottenSandboxsTokenStopsWorking() throws Exception {
        HttpResponse<String> noToken = admin(HttpRequest.newBuilder(adminUri("/sandboxes?identity=intruder"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(noToken.statusCode()).isEqualTo(401);
        HttpResponse<String> taken = admin(HttpRequest.newBuilder(adminUri("/sandboxes?identity=sandbox-a"))
                .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(taken.statusCode()).isEqualTo(409);
        HttpResponse<String> anonymous = admin(HttpRequest.newBuilder(adminUri("/sandboxes?identity=anonymous"))
                .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(anonymous.statusCode()).isEqualTo(400);

        Map<String, String> c = register("sandbox-c", ADMIN);
        assertThat(request(as(c), "shared.test", "")).startsWith("HTTP/1.1 200");
        HttpResponse<String> wrong = admin(HttpRequest.newBuilder(adminUri("/sandboxes/sandbox-c"))
                .header("Authorization", "Bearer " + ADMIN).header("X-Sallyport-Sandbox-Token", a.get("token"))
                .DELETE());
        assertThat(wrong.statusCode()).isEqualTo(404);
        HttpResponse<String> gone = admin(HttpRequest.newBuilder(adminUri("/sandboxes/sandbox-c"))
                .header("Authorization", "Bearer " + ADMIN).header("X-Sallyport-Sandbox-Token", c.get("token"))
                .DELETE());
        assertThat(gone.statusCode()).as(gone.body()).isEqualTo(200);
        assertThat(request(as(c), "shared.test", "")).isEmpty();
    }

    @Test
    void aRunnersReportOfARefusedAttemptIsAuditedUnderItsSandboxOnlyWithItsTokenAndOnlyAsAnAddressAndAKnownReason()
            throws Exception {
        HttpResponse<String> spoofed = report("sandbox-a", a.get("token"), "spoofed_source", "10.213.9.2");
        assertThat(spoofed.statusCode()).as(spoofed.body()).isEqualTo(200);
        AuditFields record = proxy.events.await("connection", f -> "spoofed_source".equals(f.reason()));
        assertThat(record.identity()).isEqualTo("sandbox-a");
        assertThat(record.client()).isEqualTo("10.213.9.2");
        assertThat(record.decision()).isEqualTo("deny");

        assertThat(report("sandbox-a", b.get("token"), "spoofed_source", "10.0.0.1").statusCode())
                .as("another sandbox's token").isEqualTo(404);
        HttpResponse<String> reason = report("sandbox-a", a.get("token"), "allow_everything", "10.0.0.1");
        assertThat(reason.statusCode()).isEqualTo(400);
        assertThat(reason.body()).isEqualTo("reason: 'allow_everything' (expected: one of spoofed_source, "
                + "wrong_relay_peer)\n");
        HttpResponse<String> source = report("sandbox-a", a.get("token"), "wrong_relay_peer", "host%0Aforged");
        assertThat(source.statusCode()).isEqualTo(400);
        assertThat(source.body()).isEqualTo("source: 'host?forged' (expected: an IPv4 or IPv6 address)\n");
        HttpResponse<String> noAdmin = admin(HttpRequest.newBuilder(adminUri("/sandboxes/sandbox-a/refused?reason="
                + "spoofed_source&source=10.0.0.1")).header("X-Sallyport-Sandbox-Token", a.get("token"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(noAdmin.statusCode()).isEqualTo(401);
    }

    static HttpResponse<String> report(String identity, String token, String reason, String source) throws Exception {
        return admin(HttpRequest.newBuilder(adminUri("/sandboxes/" + identity + "/refused?reason=" + reason + "&source="
                + source)).header("Authorization", "Bearer " + ADMIN).header("X-Sallyport-Sandbox-Token", token)
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    static byte[] concat(byte[] x, byte[] y) {
        byte[] out = java.util.Arrays.copyOf(x, x.length + y.length);
        System.arraycopy(y, 0, out, x.length, y.length);
        return out;
    }
}
