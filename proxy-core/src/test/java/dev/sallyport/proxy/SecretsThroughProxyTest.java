package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.ReflectingUpstream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Secrets through the real proxy with curl and loopback upstreams: placeholders in, real values upstream, and
 * nothing real back to the client, in the logs, the audit file or the metrics; misuse refused and audited.
 */
class SecretsThroughProxyTest {

    static final String MARKER = "[sallyport:redacted]";

    static Path dir;
    static ReflectingUpstream upstream;
    static EchoUpstream plain;
    static SallyportProxy proxy;
    static RecordingListener events = new RecordingListener();
    static Path caPem;
    static Path auditFile;
    static Map<String, String> real;
    static Map<String, String> ph;
    static PrintStream stdout;
    static PrintStream stderr;
    static ByteArrayOutputStream captured = new ByteArrayOutputStream();

    @BeforeAll
    static void start() throws Exception {
        stdout = System.out;
        stderr = System.err;
        System.setOut(new PrintStream(tee(stdout), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(tee(stderr), true, StandardCharsets.UTF_8));
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        Path root = pki.rootPem(dir);
        TestPki.Issued cert = pki.issue("api.test", "registry.test", "other.test", "strict.test");
        upstream = ReflectingUpstream.start(cert.key(), cert.chain());
        plain = EchoUpstream.http();
        real = Map.of("GIT_TOKEN", "ghp_" + random(), "NPM_TOKEN", "npm_" + random(), "API_KEY", "sk-" + random(),
                "STRICT_KEY", "st-" + random(), "PLAIN_KEY", "pk-" + random(), "PLACE_KEY", "pl-" + random());
        int p = upstream.port();
        String secrets = "secrets:\n"
                + secret("GIT_TOKEN", "api.test", "Authorization", false)
                + secret("API_KEY", "api.test", "X-Api-Key", false)
                + secret("NPM_TOKEN", "registry.test", "Authorization", false)
                + secret("STRICT_KEY", "strict.test", "X-Strict-Key", true)
                + secret("PLAIN_KEY", "plain.test", "X-Api-Key", false) + "    allow_cleartext: true\n"
                + secret("PLACE_KEY", "api.test", "X-Place-Key", false) + "    elsewhere_on_own_hosts: refuse\n";
        String rules = "  - name: tls\n    hosts: [api.test, registry.test, other.test, strict.test]\n    ports: [" + p
                + "]\n  - name: plain\n    hosts: [plain.test, plain-other.test]\n    ports: [" + plain.port() + "]\n";
        String allowPrivate = "api.test:" + p + ", registry.test:" + p + ", other.test:" + p + ", strict.test:" + p
                + ", plain.test:" + plain.port() + ", plain-other.test:" + plain.port();
        auditFile = dir.resolve("audit.jsonl");
        String yaml = ProxyFixture.policy(root, allowPrivate, "", rules).replace("AUDIT_PATH", auditFile.toString())
                + secrets;
        Policy policy = PolicyLoader.parse(yaml, "secrets-test.yaml");
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Secrets Test CA");
        caPem = dir.resolve("proxy-ca.pem");
        Files.write(caPem, CaExport.pem(ca, false));
        MapResolver resolver = new MapResolver();
        for (String h : List.of("api.test", "registry.test", "other.test", "strict.test", "plain.test",
                "plain-other.test")) {
            resolver.map(h, "127.0.0.1");
        }
        proxy = SallyportProxy.start(ProxyOptions.of(policy).withCa(ca).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", 0)).withListener(events).withResolver(resolver)
                .withPlaceholders(Placeholders.ephemeral()));
        ph = proxy.secrets().placeholders();
    }

    @AfterAll
    static void stop() throws Exception {
        String metrics = proxy.metrics().scrape();
        proxy.flushAudit();
        String audit = Files.readString(auditFile);
        proxy.close();
        upstream.close();
        plain.close();
        System.setOut(stdout);
        System.setErr(stderr);
        String logs = captured.toString(StandardCharsets.UTF_8);
        assertThat(logs).as("the proxy's log output was captured").contains("proxy listening");
        assertThat(audit).contains("\"reason\":\"secret_wrong_host\"", "\"reason\":\"secret_wrong_place\"",
                "\"reason\":\"secret_unknown_placeholder\"", "\"placeholders_forwarded\":[\"API_KEY\"]",
                "\"reason\":\"secret_required\"", "\"reason\":\"host_mismatch\"",
                "\"reason\":\"response_decode_failed\"", "\"secrets\":[\"GIT_TOKEN\"]",
                "\"secrets\":[\"API_KEY\"]", "\"secrets\":[\"NPM_TOKEN\"]");
        assertNoRealValue("audit file", audit);
        assertNoRealValue("captured stdout and stderr", logs);
        assertNoRealValue("metrics", metrics);
    }

    @Test
    void gitBasicNpmBearerAndApiKeyArriveUpstreamWithTheRealValue() {
        String git = curl("-u", "x-access-token:" + ph.get("GIT_TOKEN"), url("api.test", "/acme/repo.git/info/refs"));
        assertReflectedAndScrubbed(git);
        assertThat(upstreamHead("/acme/repo.git/info/refs")).contains("Authorization: Basic " + Base64.getEncoder()
                .encodeToString(("x-access-token:" + real.get("GIT_TOKEN")).getBytes(StandardCharsets.UTF_8)));

        String npm = curl("-H", "Authorization: Bearer " + ph.get("NPM_TOKEN"), url("registry.test", "/npm-pkg"));
        assertReflectedAndScrubbed(npm);
        assertThat(upstreamHead("/npm-pkg")).contains("Authorization: Bearer " + real.get("NPM_TOKEN"));

        String key = curl("-H", "X-Api-Key: " + ph.get("API_KEY"), url("api.test", "/v1/models"));
        assertReflectedAndScrubbed(key);
        assertThat(upstreamHead("/v1/models")).contains("X-Api-Key: " + real.get("API_KEY"))
                .containsIgnoringCase("Accept-Encoding: identity");

        AuditFields audited = events.await("exchange", f -> "/v1/models".equals(f.path()));
        assertThat(audited.secrets()).containsExactly("API_KEY");
        assertThat(events.await("exchange", f -> "/acme/repo.git/info/refs".equals(f.path())).secrets())
                .containsExactly("GIT_TOKEN");
        assertThat(proxy.metrics().scrape()).contains("sallyport_secrets_injected_total{secret=\"NPM_TOKEN\"}");
    }

    @Test
    void gzipResponsesInOneByteChunksAreDecodedAndScrubbed() {
        String out = curl("--compressed", "-u", "x-access-token:" + ph.get("GIT_TOKEN"), "-H",
                "X-Api-Key: " + ph.get("API_KEY"), url("api.test", "/gzip/echo"));
        assertReflectedAndScrubbed(out);
        assertThat(out.toLowerCase(Locale.ROOT)).doesNotContain("content-encoding: gzip");
        assertThat(upstreamHead("/gzip/echo")).contains("X-Api-Key: " + real.get("API_KEY"));
    }

    @Test
    void responsesThatCannotBeScrubbedFailClosed() {
        String br = curl("-H", "X-Api-Key: " + ph.get("API_KEY"), url("api.test", "/br/echo"));
        assertThat(br).contains("HTTP/1.1 502").contains("X-Sallyport-Reason: response_decode_failed")
                .doesNotContain("X-Echo-");
        assertNoRealValue("client output", br);

        List<String> cmd = curlBase();
        cmd.addAll(List.of("-H", "X-Api-Key: " + ph.get("API_KEY"), url("api.test", "/gzip-truncated/echo")));
        ExternalProcess.Result cut = ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
        assertThat(cut.exit()).as("the response must not end cleanly").isNotZero();
        assertThat(cut.stdout()).contains("HTTP/1.1 200");
        assertNoRealValue("client output", cut.stdout());
        awaitReason("/gzip-truncated/echo", "response_decode_failed");
    }

    @Test
    void placeholderToAnotherHostIsRefusedAndNothingIsSent() {
        int before = upstream.requests().size();
        String out = curl("-H", "Authorization: Bearer " + ph.get("NPM_TOKEN"), url("api.test", "/wrong-host"));
        assertRefused(out, "secret_wrong_host", "NPM_TOKEN", "/wrong-host");
        String other = curl("-u", "x:" + ph.get("GIT_TOKEN"), url("other.test", "/other-host"));
        assertRefused(other, "secret_wrong_host", "GIT_TOKEN", "/other-host");
        assertThat(upstream.requests()).hasSize(before);
    }

    @Test
    void placeholderInAnUnlistedHeaderTheUrlOrTheBodyOfItsOwnHostGoesOnUnchangedAndIsAudited() {
        String p = ph.get("API_KEY");
        assertThat(curl("-H", "X-Other: " + p, url("api.test", "/unlisted"))).contains("HTTP/1.1 200");
        assertThat(upstreamHead("/unlisted")).contains("X-Other: " + p).doesNotContain("X-Api-Key");
        assertThat(curl(url("api.test", "/in-url?key=" + p))).contains("HTTP/1.1 200");
        assertThat(upstreamHead("/in-url?key=" + p)).isNotNull();
        String body = curl("--data-binary", "token=" + p, url("api.test", "/in-body"));
        assertThat(body).contains("HTTP/1.1 200").endsWith("token=" + p);
        for (String path : List.of("/unlisted", "/in-url", "/in-body")) {
            AuditFields f = events.await("exchange", e -> path.equals(e.path()));
            assertThat(f.decision()).as(path).isEqualTo("allow");
            assertThat(f.placeholdersForwarded()).as(path).containsExactly("API_KEY");
            assertThat(f.secrets()).as(path + ": nothing injected").isNull();
        }
        // toward another host the same places are refused
        assertRefused(curl("--data-binary", "token=" + p, url("other.test", "/other-body")), "secret_wrong_host",
                "API_KEY", "/other-body");
    }

    @Test
    void aSecretThatSaysRefuseRefusesItsPlaceholderOutsideItsHeaders() {
        String p = ph.get("PLACE_KEY");
        assertRefused(curl("-H", "X-Other: " + p, url("api.test", "/strict-unlisted")), "secret_wrong_place",
                "PLACE_KEY", "/strict-unlisted");
        assertRefused(curl(url("api.test", "/strict-in-url?key=" + p)), "secret_wrong_place", "PLACE_KEY",
                "/strict-in-url");
        assertRefused(curl("--data-binary", "token=" + p, url("api.test", "/strict-in-body")), "secret_wrong_place",
                "PLACE_KEY", "/strict-in-body");
        assertThat(String.join("\n", upstream.requests())).doesNotContain(p).doesNotContain("/strict-in-url")
                .doesNotContain("/strict-unlisted");
    }

    @Test
    void aStalePlaceholderIsRefusedWithItsOwnReasonInsteadOfGoingUpstreamAsABareToken() {
        String stale = Placeholders.ephemeral().derive("API_KEY");
        int before = upstream.requests().size();
        String out = curl("-H", "X-Api-Key: " + stale, url("api.test", "/stale"));
        assertThat(out).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: secret_unknown_placeholder");
        assertThat(upstream.requests()).hasSize(before);
        AuditFields f = refusal("/stale", "secret_unknown_placeholder");
        assertThat(f.secrets()).isNull();
        proxy.flushAudit();
        assertThat(proxy.metrics().scrape())
                .contains("sallyport_secret_refusals_total{reason=\"secret_unknown_placeholder\",secret=\"none\"}");
    }

    @Test
    void spoofedHostInsideATunnelIsRefusedWithoutInjection() {
        int before = upstream.requests().size();
        String out = curl("-H", "Host: api.test:" + upstream.port(), "-H", "X-Api-Key: " + ph.get("API_KEY"),
                url("other.test", "/spoofed"));
        assertThat(out).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: host_mismatch");
        assertThat(upstream.requests()).hasSize(before);
        assertThat(events.await("request", f -> "/spoofed".equals(f.path())).reason()).isEqualTo("host_mismatch");
    }

    @Test
    void requiredSecretRefusesTheRequestButKeepsTheTunnel() {
        String base = "https://strict.test:" + upstream.port();
        List<String> cmd = new ArrayList<>(curlBase());
        cmd.add(base + "/strict-without");
        cmd.addAll(List.of("--next", "-x", proxy.address().getHostString() + ":" + proxy.address().getPort(),
                "--cacert", caPem.toString(), "-D", "-", "-H", "X-Strict-Key: " + ph.get("STRICT_KEY"),
                base + "/strict-with"));
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), cmd, null);
        assertThat(r.stdout()).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: secret_required")
                .contains("HTTP/1.1 200");
        assertThat(upstreamHead("/strict-with")).contains("X-Strict-Key: " + real.get("STRICT_KEY"));
        assertThat(events.all("connect").stream().filter(f -> "strict.test".equals(f.host())).count()).isOne();
        assertThat(events.await("request", f -> "/strict-without".equals(f.path())).secrets())
                .containsExactly("STRICT_KEY");
        assertNoRealValue("curl output", r.stdout());
    }

    @Test
    void absoluteFormPlainHttpIsInjectedOnlyForItsOwnHostWhenTheSecretAllowsCleartext() {
        String ok = curl("-H", "X-Api-Key: " + ph.get("PLAIN_KEY"), "http://plain.test:" + plain.port() + "/plain");
        assertThat(ok).contains("HTTP/1.1 200");
        assertThat(String.join("\n", plain.requests)).contains(real.get("PLAIN_KEY"));
        String refused = curl("-H", "X-Api-Key: " + ph.get("PLAIN_KEY"),
                "http://plain-other.test:" + plain.port() + "/plain-other");
        assertRefused(refused, "secret_wrong_host", "PLAIN_KEY", "/plain-other");
    }

    // ---- helpers

    static void assertReflectedAndScrubbed(String out) {
        assertThat(out).contains("HTTP/1.1 200").contains("X-Echo-").contains(MARKER);
        String body = out.substring(out.lastIndexOf("\r\n\r\n") + 4);
        assertThat(body).as("the reflected request head, readable (decoded) and scrubbed")
                .containsPattern("^[A-Z]+ /\\S* HTTP/1\\.1\r\n").contains(MARKER);
        assertNoRealValue("client output", out);
    }

    static void assertRefused(String out, String reason, String secret, String path) {
        assertThat(out).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: " + reason);
        assertNoRealValue("client output", out);
        AuditFields f = refusal(path, reason);
        assertThat(f.decision()).isEqualTo("deny");
        assertThat(f.secrets()).containsExactly(secret);
        proxy.flushAudit();
        String metrics = proxy.metrics().scrape();
        assertThat(metrics).contains("sallyport_secret_refusals_total{reason=\"" + reason + "\",secret=\"" + secret
                + "\"}");
    }

    /** The audit fields of the refusal: a request decision (refused at the head) or an exchange (in the body). */
    static AuditFields refusal(String path, String reason) {
        return Await.value(() -> "a refusal " + reason + " for " + path + " (got " + events.events + ")",
                Duration.ofSeconds(10), () -> {
                    for (String kind : List.of("request", "exchange")) {
                        for (AuditFields f : events.all(kind)) {
                            if (path.equals(f.path()) && reason.equals(f.reason()) && "deny".equals(f.decision())) {
                                return f;
                            }
                        }
                    }
                    return null;
                });
    }

    static void awaitReason(String path, String reason) {
        Await.until("an exchange for " + path + " with reason " + reason, Duration.ofSeconds(10),
                () -> events.all("exchange").stream().anyMatch(f -> path.equals(f.path()) && reason.equals(f.reason())));
    }

    /** The raw value, and each base64 fragment (both alphabets, all three alignments) that encodes only its bits. */
    static void assertNoRealValue(String where, String text) {
        for (Map.Entry<String, String> e : real.entrySet()) {
            byte[] v = e.getValue().getBytes(StandardCharsets.UTF_8);
            assertThat(text).as(where + " holds " + e.getKey()).doesNotContain(e.getValue());
            for (int shift = 0; shift < 3; shift++) {
                byte[] padded = new byte[shift + v.length];
                System.arraycopy(v, 0, padded, shift, v.length);
                for (Base64.Encoder enc : List.of(Base64.getEncoder(), Base64.getUrlEncoder())) {
                    String b64 = enc.withoutPadding().encodeToString(padded);
                    String fragment = b64.substring(3, b64.length() - 3);
                    assertThat(text).as(where + " holds base64 of " + e.getKey()).doesNotContain(fragment);
                }
            }
        }
    }

    static String upstreamHead(String path) {
        return upstream.requests().stream().filter(h -> h.contains(" " + path + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("upstream never got " + path + "; got " + upstream.requests()));
    }

    static String url(String host, String path) {
        return "https://" + host + ":" + upstream.port() + path;
    }

    static List<String> curlBase() {
        return new ArrayList<>(List.of("curl", "--http1.1", "-sS", "--max-time", "10", "-x",
                proxy.address().getHostString() + ":" + proxy.address().getPort(), "--cacert", caPem.toString(),
                "-D", "-", "--noproxy", ""));
    }

    static String curl(String... args) {
        List<String> cmd = curlBase();
        cmd.addAll(List.of(args));
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertNoRealValue("curl stderr", r.stderr());
        return r.stdout();
    }

    static String secret(String name, String host, String header, boolean require) throws Exception {
        Path file = dir.resolve(name.toLowerCase(Locale.ROOT));
        Files.writeString(file, real.get(name) + "\n");
        return "  - name: " + name + "\n    from: file:" + file + "\n    hosts: [" + host + "]\n    headers: [" + header
                + "]\n" + (require ? "    require: true\n" : "");
    }

    static String random() {
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b).replace('-', 'x').replace('_', 'y');
    }

    static OutputStream tee(PrintStream original) {
        return new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (captured) {
                    captured.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (captured) {
                    captured.write(b, off, len);
                }
                original.write(b, off, len);
            }
        };
    }
}
