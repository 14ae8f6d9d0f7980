package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** DEFENCES.md classes 1 and 6 from the attacker's side, plus upstream failures reaching the client as 502/504. */
class TunnelAttackTest {

    static Path dir;
    static TestPki pki;
    static EchoUpstream upstream;
    static EchoUpstream wrongName;
    static ProxyFixture proxy;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        pki = TestPki.create();
        upstream = EchoUpstream.https(pki.issue("upstream.test"));
        wrongName = EchoUpstream.https(pki.issue("someone-else.test"));
        MapResolver resolver = new MapResolver().map("upstream.test", "127.0.0.1").map("wrong.test", "127.0.0.1");
        String rules = "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n"
                + "  - name: wrong\n    hosts: [wrong.test]\n    ports: [" + wrongName.port() + "]\n"
                + "  - name: by-ip\n    cidrs: [127.0.0.1/32]\n    ports: [" + upstream.port() + "]\n";
        String timeouts = "  timeouts: {response_headers: 1s}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + upstream.port()
                + ", 127.0.0.1/32:" + wrongName.port(), timeouts, rules), resolver, dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
        wrongName.close();
    }

    static ExternalProcess.Result openssl(String connect, String... extra) {
        List<String> cmd = new ArrayList<>(List.of("openssl", "s_client", "-proxy", "127.0.0.1:" + proxy.port(),
                "-connect", connect, "-CAfile", proxy.caPem.toString(), "-verify_return_error", "-brief", "-ign_eof"));
        cmd.addAll(List.of(extra));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd,
                ("GET /echo HTTP/1.1\r\nHost: upstream.test:" + upstream.port() + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.UTF_8));
    }

    static ExternalProcess.Result curl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "--http1.1", "-sS", "--max-time", "10", "-x", proxy.proxyUrl(),
                "--cacert", proxy.caPem.toString(), "-D", "-", "--noproxy", ""));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
    }

    @Test
    void sniThatNamesAnotherHostIsRefused() {
        ExternalProcess.Result r = openssl("upstream.test:" + upstream.port(), "-servername", "evil.test");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stdout()).doesNotContain("host=");
        AuditFields refused = proxy.events.await("tunnel", f -> "sni_mismatch".equals(f.reason()));
        assertThat(refused.decision()).isEqualTo("deny");
    }

    @Test
    void missingSniForANameTargetIsRefused() {
        ExternalProcess.Result r = openssl("upstream.test:" + upstream.port(), "-noservername");
        assertThat(r.exit()).isNotZero();
        proxy.events.await("tunnel", f -> "sni_missing".equals(f.reason()));
    }

    @Test
    void matchingSniWorksWithOpenssl() {
        ExternalProcess.Result r = openssl("upstream.test:" + upstream.port(), "-servername", "upstream.test");
        assertThat(r.stdout()).contains("GET /echo host=upstream.test");
    }

    @Test
    void eachTunnelIsShownTheCertificateOfItsOwnTargetOverTls13AndTls12() {
        for (String version : List.of("-tls1_3", "-tls1_2")) {
            for (String host : List.of("upstream.test", "wrong.test", "upstream.test")) {
                int port = host.equals("upstream.test") ? upstream.port() : wrongName.port();
                ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("openssl", "s_client",
                        "-proxy", "127.0.0.1:" + proxy.port(), "-connect", host + ":" + port, "-servername", host,
                        "-verify_hostname", host, "-CAfile", proxy.caPem.toString(), "-verify_return_error", "-brief",
                        version), new byte[0]);
                String out = r.stdout() + r.stderr();
                assertThat(r.exit()).as(host + " " + version + ": " + out).isZero();
                assertThat(out).contains("Verification: OK").contains("Peer certificate: CN = " + host)
                        .contains("Protocol version: " + (version.equals("-tls1_3") ? "TLSv1.3" : "TLSv1.2"));
            }
        }
    }

    @Test
    void theMintedSideOffersH2AndHttp11InAlpnByDefault() {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("openssl", "s_client",
                "-proxy", "127.0.0.1:" + proxy.port(), "-connect", "upstream.test:" + upstream.port(),
                "-servername", "upstream.test", "-alpn", "h2,http/1.1", "-CAfile", proxy.caPem.toString()),
                new byte[0]);
        assertThat(r.stdout()).contains("ALPN protocol: h2");
    }

    @Test
    void missingSniIsAcceptedForAnIpLiteralTarget() {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("openssl", "s_client",
                "-proxy", "127.0.0.1:" + proxy.port(), "-connect", "127.0.0.1:" + upstream.port(), "-noservername",
                "-CAfile", proxy.caPem.toString(), "-verify_return_error", "-brief", "-ign_eof"),
                ("GET /echo HTTP/1.1\r\nHost: 127.0.0.1:" + upstream.port() + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8));
        // the handshake and the policy pass; the upstream's certificate names upstream.test, not the IP, so 502
        assertThat(r.stdout()).contains("X-Sallyport-Reason: upstream_tls_failed");
    }

    @Test
    void hostHeaderInsideTheTunnelMustNameTheConnectTarget() {
        ExternalProcess.Result r = curl("-H", "Host: other.test", "https://upstream.test:" + upstream.port() + "/echo");
        assertThat(r.stdout()).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: host_mismatch");
        assertThat(r.stdout()).doesNotContain("host=");
    }

    @Test
    void plainHttpBytesInAnInterceptedTunnelAreRefused() throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(5000);
            String target = "upstream.test:" + upstream.port();
            s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] head = s.getInputStream().readNBytes(19);
            assertThat(new String(head, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
            s.getInputStream().readNBytes(s.getInputStream().available());
            s.getOutputStream().write(("GET /echo HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String rest = RawClient.readAll(s.getInputStream());
            assertThat(rest).doesNotContain("host=").doesNotContain("<timeout>");
        }
        proxy.events.await("tunnel", f -> "not_tls".equals(f.reason()));
    }

    @Test
    void upstreamCertificateForAnotherNameGives502WithTheHop() {
        ExternalProcess.Result r = curl("https://wrong.test:" + wrongName.port() + "/echo");
        assertThat(r.stdout()).contains("HTTP/1.1 502").contains("X-Sallyport-Reason: upstream_tls_failed")
                .contains("=> wrong.test:" + wrongName.port() + ": upstream TLS handshake failed");
    }

    @Test
    void upstreamThatNeverAnswersGives504() {
        ExternalProcess.Result r = curl("https://upstream.test:" + upstream.port() + "/silent");
        assertThat(r.stdout()).contains("HTTP/1.1 504").contains("X-Sallyport-Reason: upstream_timeout");
    }
}
