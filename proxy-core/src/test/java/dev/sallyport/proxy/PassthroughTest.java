package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code tls: passthrough}: bytes relayed untouched after the ClientHello's SNI was checked. */
class PassthroughTest {

    static Path dir;
    static Path root;
    static EchoUpstream upstream;
    static ProxyFixture proxy;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        root = pki.rootPem(dir);
        upstream = EchoUpstream.https(pki.issue("pinned.test"));
        String rules = "  - name: pinned\n    hosts: [pinned.test]\n    ports: [" + upstream.port() + "]\n"
                + "    tls: passthrough\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(null, "pinned.test:" + upstream.port(), "", rules),
                new MapResolver().map("pinned.test", "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    static ExternalProcess.Result openssl(String sni, String... extra) {
        List<String> cmd = new ArrayList<>(List.of("openssl", "s_client", "-proxy", "127.0.0.1:" + proxy.port(),
                "-connect", "pinned.test:" + upstream.port(), "-servername", sni, "-CAfile", root.toString(),
                "-verify_return_error", "-brief", "-ign_eof"));
        cmd.addAll(List.of(extra));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, ("GET /pinned HTTP/1.1\r\nHost: pinned.test\r\n"
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theClientSeesTheUpstreamCertificateEvenWithAClientHelloSplitAcrossRecords() {
        ExternalProcess.Result r = openssl("pinned.test", "-max_send_frag", "512");
        assertThat(r.stdout()).contains("GET /pinned host=pinned.test");
        assertThat(r.stderr()).contains("Verification: OK");
        AuditFields end = proxy.events.await("tunnel_end", f -> "passthrough".equals(f.tls()));
        assertThat(end.ip()).isEqualTo("127.0.0.1");
        assertThat(end.sni()).isEqualTo("pinned.test");
        assertThat(end.bytesUp()).isPositive();
        assertThat(end.bytesDown()).isPositive();
    }

    @Test
    void aPassthroughTunnelWhoseSniNamesAnotherHostIsRefused() {
        int before = upstream.connections.get();
        ExternalProcess.Result r = openssl("evil.test");
        assertThat(r.stdout()).doesNotContain("host=");
        proxy.events.await("tunnel", f -> "sni_mismatch".equals(f.reason()));
        assertThat(upstream.connections.get()).isEqualTo(before);
    }
}
