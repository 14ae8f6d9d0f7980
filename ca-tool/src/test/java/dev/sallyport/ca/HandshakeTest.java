package dev.sallyport.ca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TlsTestServer;
import dev.sallyport.testing.Trust;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Minted certificates meet real TLS clients (curl, openssl s_client, the JDK) that trust only our CA: accepted
 * for the right name, rejected for another name and when the client trusts a different CA.
 */
class HandshakeTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String HOST = "api.example.test";
    private static final String BODY = "hello from the minted leaf";

    @TempDir
    static Path dir;
    private static ExecutorService pool;
    private static CertificateAuthority ca;
    private static LeafMinter minter;
    private static Path caPem;
    private static Path otherCaPem;

    @BeforeAll
    static void setUp() throws Exception {
        pool = Executors.newFixedThreadPool(2);
        ca = CertificateAuthority.init(dir.resolve("ca"), "Handshake Test CA", KeyType.EC_P256, 30);
        caPem = dir.resolve("ca/ca.pem");
        otherCaPem = Files.write(dir.resolve("other-ca.pem"),
                CaExport.pem(CertificateAuthority.ephemeral("Some Other CA"), false));
        minter = new LeafMinter(ca, pool, InstantSource.system(), MintListener.NONE);
    }

    @AfterAll
    static void tearDown() throws InterruptedException {
        minter.close();
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private static TlsTestServer serve(LeafMinter from, String name) throws Exception {
        LeafCertificate leaf = from.mint(name).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return TlsTestServer.start(leaf.key(), leaf.chain(), BODY);
    }

    private static ExternalProcess.Result curl(Path trust, String host, int port) {
        return ExternalProcess.run(TIMEOUT, List.of("curl", "-sS", "--noproxy", "*", "--max-time", "20",
                "--cacert", trust.toString(), "--resolve", host + ":" + port + ":127.0.0.1",
                "https://" + host + ":" + port + "/"), null);
    }

    private static ExternalProcess.Result sClient(Path trust, String host, int port) {
        List<String> cmd = new ArrayList<>(List.of("openssl", "s_client", "-connect", "127.0.0.1:" + port,
                "-servername", host, "-verify_hostname", host, "-verify_return_error", "-CAfile", trust.toString()));
        return ExternalProcess.run(TIMEOUT, cmd, new byte[0]);
    }

    @ParameterizedTest
    @EnumSource(KeyType.class)
    void curlAndOpensslAcceptALeafFromEveryCaKeyType(KeyType type) throws Exception {
        Path typeDir = dir.resolve("type-" + type.id());
        CertificateAuthority typed = CertificateAuthority.init(typeDir, "CA " + type.id(), type, 5);
        try (LeafMinter m = new LeafMinter(typed, pool, InstantSource.system(), MintListener.NONE);
             TlsTestServer server = serve(m, HOST)) {
            ExternalProcess.Result curl = curl(typeDir.resolve("ca.pem"), HOST, server.port());
            assertThat(curl.exit()).as(curl.stderr()).isZero();
            assertThat(curl.stdout()).isEqualTo(BODY);

            ExternalProcess.Result openssl = sClient(typeDir.resolve("ca.pem"), HOST, server.port());
            assertThat(openssl.exit()).as(openssl.stderr()).isZero();
            assertThat(openssl.stdout()).contains("Verify return code: 0 (ok)");
            assertThat(server.serverNames()).contains(HOST);
        }
    }

    @Test
    void curlRejectsTheLeafForAnotherHostName() throws Exception {
        try (TlsTestServer server = serve(minter, "other.example.test")) {
            ExternalProcess.Result r = curl(caPem, HOST, server.port());
            assertThat(r.exit()).as(r.stderr()).isIn(51, 60); // peer certificate / host name not OK
            assertThat(r.stderr()).contains(HOST);
            assertThat(r.stdout()).doesNotContain(BODY);
        }
    }

    @Test
    void curlRejectsTheLeafWhenTrustingAnotherCa() throws Exception {
        try (TlsTestServer server = serve(minter, HOST)) {
            ExternalProcess.Result r = curl(otherCaPem, HOST, server.port());
            assertThat(r.exit()).as(r.stderr()).isEqualTo(60);
            assertThat(r.stdout()).doesNotContain(BODY);
        }
    }

    @Test
    void curlAcceptsAnIpLeafAndTheBundleExport() throws Exception {
        Path bundle = Files.write(dir.resolve("bundle.pem"), CaExport.pem(ca, true));
        try (TlsTestServer server = serve(minter, "127.0.0.1")) {
            ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, List.of("curl", "-sS", "--noproxy", "*",
                    "--max-time", "20", "--cacert", bundle.toString(), "https://127.0.0.1:" + server.port() + "/"),
                    null);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(r.stdout()).isEqualTo(BODY);
        }
    }

    @Test
    void opensslRejectsAnotherHostNameAndAnotherCa() throws Exception {
        try (TlsTestServer server = serve(minter, "other.example.test")) {
            ExternalProcess.Result r = sClient(caPem, HOST, server.port());
            assertThat(r.exit()).isNotZero();
            assertThat(r.stdout() + r.stderr()).contains("hostname mismatch").doesNotContain("Verify return code: 0 (ok)");
        }
        try (TlsTestServer server = serve(minter, HOST)) {
            ExternalProcess.Result r = sClient(otherCaPem, HOST, server.port());
            assertThat(r.exit()).isNotZero();
            assertThat(r.stdout() + r.stderr()).contains("certificate verify failed").doesNotContain("Verify return code: 0 (ok)");
        }
    }

    @Test
    void jdkHttpClientTrustingOnlyOurCaAcceptsAnIpLeafAndRejectsOthers() throws Exception {
        SSLContext ours = trusting(CaExport.p12(ca, "changeit".toCharArray(), false), "changeit");
        SSLContext theirs = trusting(CaExport.p12(CertificateAuthority.ephemeral("Other"), "x".toCharArray(), false),
                "x");
        try (TlsTestServer server = serve(minter, "127.0.0.1")) {
            URI uri = URI.create("https://127.0.0.1:" + server.port() + "/");
            HttpResponse<String> ok = get(ours, uri);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo(BODY);
            assertThatThrownBy(() -> get(theirs, uri)).isInstanceOf(SSLHandshakeException.class);
        }
        try (TlsTestServer server = serve(minter, "127.0.0.2")) { // a leaf for another address
            URI uri = URI.create("https://127.0.0.1:" + server.port() + "/");
            assertThatThrownBy(() -> get(ours, uri)).isInstanceOf(SSLHandshakeException.class)
                    .hasMessageContaining("127.0.0.1");
        }
    }

    @Test
    void jdkSocketWithHostnameVerificationAndSniAcceptsOnlyTheRightName() throws Exception {
        SSLContext ours = trusting(CaExport.p12(ca, "pw".toCharArray(), false), "pw");
        try (TlsTestServer server = serve(minter, HOST)) {
            handshake(ours, HOST, server.port());
            assertThat(server.serverNames()).contains(HOST);
        }
        try (TlsTestServer server = serve(minter, "other.example.test")) {
            assertThatThrownBy(() -> handshake(ours, HOST, server.port())).isInstanceOf(SSLHandshakeException.class);
        }
    }

    private static void handshake(SSLContext context, String host, int port) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            SSLParameters params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            params.setServerNames(List.of(new SNIHostName(host)));
            socket.setSSLParameters(params);
            socket.startHandshake();
            socket.getOutputStream().write(("GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(response).startsWith("HTTP/1.1 200 OK").endsWith(BODY);
        }
    }

    private static HttpResponse<String> get(SSLContext context, URI uri) throws Exception {
        try (HttpClient client = HttpClient.newBuilder().sslContext(context).proxy(HttpClient.Builder.NO_PROXY)
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build()) {
            return client.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    /** An SSLContext whose only trust anchors come from a p12 made by {@link CaExport#p12}. */
    private static SSLContext trusting(byte[] p12, String password) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(p12), password.toCharArray());
        return Trust.of(store).context;
    }
}
