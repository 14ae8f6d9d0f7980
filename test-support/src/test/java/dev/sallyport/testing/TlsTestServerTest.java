package dev.sallyport.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsTestServerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void answersOverTlsWithTheGivenChain() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued issued = pki.issue("127.0.0.1", "upstream.example.test");
        try (TlsTestServer server = TlsTestServer.start(issued.key(), issued.chain(), "upstream says hi")) {
            HttpResponse<String> r = get(trusting(pki.root()), URI.create("https://127.0.0.1:" + server.port() + "/x"));

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("upstream says hi");
            assertThat(server.requests()).singleElement().asString().startsWith("GET /x HTTP/1.1\r\n");
            assertThat(server.address().getAddress().isLoopbackAddress()).isTrue();
            assertThat(server.serverNames()).containsExactly(""); // no SNI for an IP literal
        }
    }

    @Test
    void readsRequestBodiesAndSeesSni() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued issued = pki.issue("upstream.example.test");
        try (TlsTestServer server = TlsTestServer.start(issued.key(), issued.chain(), "ok")) {
            SSLContext context = trusting(pki.root());
            try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) context.getSocketFactory()
                    .createSocket(java.net.InetAddress.getLoopbackAddress(), server.port())) {
                var params = socket.getSSLParameters();
                params.setServerNames(List.of(new javax.net.ssl.SNIHostName("upstream.example.test")));
                params.setEndpointIdentificationAlgorithm("HTTPS");
                socket.setSSLParameters(params);
                socket.getOutputStream().write(("POST /p HTTP/1.1\r\nHost: upstream.example.test\r\n"
                        + "Content-Length: 5\r\n\r\nhello").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                String response = new String(socket.getInputStream().readAllBytes(),
                        java.nio.charset.StandardCharsets.US_ASCII);
                assertThat(response).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\nok");
            }
            assertThat(server.bodies()).singleElement().isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
            assertThat(server.serverNames()).containsExactly("upstream.example.test");
        }
    }

    @Test
    void clientsTrustingAnotherRootFailAndTheFailureIsCounted() throws Exception {
        TestPki.Issued issued = TestPki.create().issue("127.0.0.1");
        SSLContext other = trusting(TestPki.create().root());
        try (TlsTestServer server = TlsTestServer.start(issued.key(), issued.chain())) {
            assertThatThrownBy(() -> get(other, URI.create("https://127.0.0.1:" + server.port() + "/")))
                    .isInstanceOf(SSLHandshakeException.class);
            Instant deadline = Instant.now().plusSeconds(10);
            while (server.handshakeFailures() == 0 && Instant.now().isBefore(deadline)) {
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L); // poll; the count lands just after the client gives up
            }
            assertThat(server.handshakeFailures()).isEqualTo(1);
        }
    }

    @Test
    void anExpiredCertificateIsRejected() throws Exception {
        TestPki pki = TestPki.create();
        Instant now = Instant.now();
        TestPki.Issued expired = pki.issue(now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)), "127.0.0.1");
        try (TlsTestServer server = TlsTestServer.start(expired.key(), expired.chain())) {
            assertThatThrownBy(() -> get(trusting(pki.root()), URI.create("https://127.0.0.1:" + server.port() + "/")))
                    .isInstanceOf(SSLHandshakeException.class);
        }
    }

    @Test
    void pemFilesRoundTrip(@TempDir Path dir) throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued issued = pki.issue("a.example.test", "::1");
        CertificateFactory cf = CertificateFactory.getInstance("X.509");

        java.util.Collection<? extends java.security.cert.Certificate> chain = cf.generateCertificates(new ByteArrayInputStream(java.nio.file.Files.readAllBytes(
                issued.writeCertPem(dir))));
        assertThat(List.copyOf(chain)).isEqualTo(List.of(issued.chain()));
        assertThat(cf.generateCertificate(new ByteArrayInputStream(java.nio.file.Files.readAllBytes(pki.rootPem(dir)))))
                .isEqualTo(pki.root());
        assertThat(java.nio.file.Files.readString(issued.writeKeyPem(dir))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(issued.chain()[0].getSubjectAlternativeNames()).containsExactly(
                List.of(2, "a.example.test"), List.of(7, "0:0:0:0:0:0:0:1"));
        assertThat(issued.toString()).contains("key=<hidden>");
    }

    private static HttpResponse<String> get(SSLContext context, URI uri) throws Exception {
        try (HttpClient client = HttpClient.newBuilder().sslContext(context).proxy(HttpClient.Builder.NO_PROXY)
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build()) {
            return client.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    private static SSLContext trusting(X509Certificate root) {
        return Trust.of(root).context;
    }
}
