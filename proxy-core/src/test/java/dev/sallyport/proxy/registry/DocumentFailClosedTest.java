package dev.sallyport.proxy.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A package document the proxy cannot read is refused, never passed on unfiltered: one that is not JSON, one that is
 * gzip-encoded although identity was asked for, and one larger than {@code max_document_bytes}. curl through the
 * proxy sees {@code 502} with the reason; what is not a document (a search) passes as it came.
 */
class DocumentFailClosedTest {

    private static final String HOST = "registry.example.test";

    static Path dir;
    static TestPki pki;
    static LenientUpstream upstream;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        pki = TestPki.create();
        TestPki.Issued leaf = pki.issue(HOST);
        upstream = LenientUpstream.https(leaf.key(), leaf.chain(), (request, c) -> {
            String target = request.requestLine().split(" ")[1];
            String body = switch (target) {
                case "/html" -> "<html>not a document</html>";
                case "/big" -> "{\"name\":\"big\",\"versions\":{},\"readme\":\"" + "x".repeat(4096) + "\"}";
                default -> "{\"objects\":[]}";
            };
            String extra = target.equals("/gzipped") ? "Content-Encoding: gzip\r\n" : "";
            c.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra + "Content-Length: "
                    + body.length() + "\r\n\r\n" + body).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        });
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    ExternalProcess.Result curl(ProxyFixture p, String path) {
        return ExternalProcess.run(Duration.ofSeconds(20), List.of("curl", "-sS", "--http1.1", "-x", p.proxyUrl(),
                "--noproxy", "", "--cacert", p.caPem.toString(), "-D", "-", "https://" + HOST + ":" + upstream.port()
                        + path), null);
    }

    @Test
    void unreadableEncodedAndOversizedDocumentsAreRefused() throws Exception {
        String registries = "registries:\n  - name: npm\n    ecosystem: npm\n    hosts: [" + HOST + "]\n"
                + "    ports: [" + upstream.port() + "]\n    max_document_bytes: 2048\n";
        try (ProxyFixture p = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), HOST + ":" + upstream.port(),
                "", "") + registries, new MapResolver().map(HOST, "127.0.0.1"), dir)) {
            for (String path : List.of("/html", "/gzipped", "/big")) {
                ExternalProcess.Result r = curl(p, path);
                assertThat(r.stdout()).as(path).contains("HTTP/1.1 502")
                        .contains("X-Sallyport-Reason: registry_document_unreadable")
                        .doesNotContain("not a document").doesNotContain("xxxx");
                AuditFields f = p.events.await("exchange", e -> path.equals(e.path()));
                assertThat(f.reason()).isEqualTo("registry_document_unreadable");
            }
            ExternalProcess.Result search = curl(p, "/-/v1/search");
            assertThat(search.stdout()).contains("HTTP/1.1 200").contains("{\"objects\":[]}");
        }
    }
}
