package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.Trust;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The transparent listener: a connection that begins with its original destination (a PROXY v2 header, as the
 * sandbox's relay writes it) to a synthetic address the DNS stub gave is a CONNECT to that name: intercepted (SNI
 * must name it), decided and audited like one, with secrets injected; an address that names nothing, a header that
 * is not one, and a name whose SNI disagrees reach nothing.
 */
class TransparentListenerTest {

    static final String VALUE = "tr-secret-value-5c1d0e";
    static final String PLACEHOLDER = "sallyport-ph-transparentplaceholderaaaa";
    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test", "other.test");
        Path secret = Files.writeString(up.dir.resolve("secret"), VALUE + "\n");
        String rules = "  - name: api\n    hosts: [api.test, other.test]\n    ports: [" + up.tls.port() + ", "
                + up.plain.port() + "]\n";
        String secrets = "secrets:\n  - name: TOKEN\n    from: file:" + secret + "\n    hosts: [api.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PLACEHOLDER + "\n";
        proxy = ProxyFixture.startWithCapture(ProxyFixture.policy(up.root, "api.test:" + up.tls.port() + ", other.test:"
                        + up.tls.port() + ", api.test:" + up.plain.port(), "", rules) + secrets,
                new MapResolver().map("api.test", "127.0.0.1").map("other.test", "127.0.0.1"), up.dir);
        trust = Trust.of(proxy.caPem);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    /** The stub's answer for {@code name}, asked with dig. */
    static InetAddress lookUp(String name) throws IOException {
        Prerequisites.require("dig", new java.io.File("/usr/bin/dig").canExecute(),
                "dig (Debian: apt-get install bind9-dnsutils; scripts/install-deps.sh)");
        InetSocketAddress dns = proxy.proxy.dnsAddress().orElseThrow();
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("dig", "@127.0.0.1", "-p",
                Integer.toString(dns.getPort()), "+short", "+time=5", "+tries=1", name, "A"), null);
        assertThat(r.exit()).as(r.stderr()).isZero();
        return InetAddress.getByName(r.stdout().strip());
    }

    static byte[] header(InetAddress destination, int port) {
        ByteBuffer b = ByteBuffer.allocate(28);
        b.put(new byte[] {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a});
        b.put((byte) 0x21).put((byte) 0x11).putShort((short) 12);
        b.put(new byte[] {127, 0, 0, 1}).put(destination.getAddress()).putShort((short) 40000).putShort((short) port);
        return b.array();
    }

    /** Opens a transparent connection to {@code destination:port}, then TLS with {@code sni}, then one request. */
    static String request(InetAddress destination, String sni, String authorization) throws IOException {
        InetSocketAddress listener = proxy.proxy.transparentAddress().orElseThrow();
        try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header(destination, up.tls.port()));
            try (SSLSocket tls = (SSLSocket) trust.context.getSocketFactory().createSocket(raw, sni, up.tls.port(),
                    true)) {
                SSLParameters params = tls.getSSLParameters();
                params.setServerNames(List.of(new SNIHostName(sni)));
                tls.setSSLParameters(params);
                OutputStream out = tls.getOutputStream();
                out.write(("GET /hello HTTP/1.1\r\nHost: " + sni + ":" + up.tls.port() + "\r\nAuthorization: "
                        + authorization + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                return readAll(tls.getInputStream());
            }
        }
    }

    static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        in.transferTo(all);
        return all.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aSyntheticAddressIsAConnectToItsNameWithTheSecretInjected() throws Exception {
        InetAddress address = lookUp("api.test");
        assertThat(SyntheticAddresses.isSynthetic(address)).isTrue();
        String answer = request(address, "api.test", "Bearer " + PLACEHOLDER);
        assertThat(answer).startsWith("HTTP/1.1 200").contains("GET /hello host=api.test:" + up.tls.port());
        assertThat(up.tls.requests).anySatisfy(r -> assertThat(r).contains("GET /hello").contains(VALUE));
        AuditFields connect = proxy.events.await("connect", f -> "api.test".equals(f.host()));
        assertThat(connect.decision()).isEqualTo("allow");
        assertThat(connect.tls()).isEqualTo("intercepted");
        assertThat(connect.arrival()).isEqualTo("transparent");
        AuditFields request = proxy.events.await("exchange", f -> "/hello".equals(f.path())
                && "api.test".equals(f.host()));
        assertThat(request.secrets()).containsExactly("TOKEN");
        assertThat(request.arrival()).isEqualTo("transparent");
        assertThat(answer).doesNotContain(VALUE);
    }

    @Test
    void plainHttpOnACapturedConnectionIsReadAsHttpAndDecided() throws Exception {
        InetAddress address = lookUp("api.test");
        int port = up.plain.port();
        InetSocketAddress listener = proxy.proxy.transparentAddress().orElseThrow();
        try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header(address, port));
            raw.getOutputStream().write(("GET /plain HTTP/1.1\r\nHost: api.test:" + port + "\r\nAuthorization: Bearer "
                    + PLACEHOLDER + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String answer = readAll(raw.getInputStream());
            assertThat(answer).as("the secret's host, but cleartext: refused").startsWith("HTTP/1.1 403")
                    .doesNotContain(VALUE);
        }
        try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header(address, port));
            raw.getOutputStream().write(("GET /plain HTTP/1.1\r\nHost: api.test:" + port
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertThat(readAll(raw.getInputStream())).startsWith("HTTP/1.1 200").contains("GET /plain");
        }
        try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header(address, port));
            raw.getOutputStream().write(("GET /plain HTTP/1.1\r\nHost: other.test:" + port
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertThat(readAll(raw.getInputStream())).as("Host must name the captured name")
                    .startsWith("HTTP/1.1 403");
        }
        AuditFields request = proxy.events.await("exchange", f -> "/plain".equals(f.path())
                && "allow".equals(f.decision()));
        assertThat(request.arrival()).isEqualTo("transparent");
        assertThat(request.tls()).isEqualTo("none");
        proxy.events.await("request", f -> "/plain".equals(f.path()) && "host_mismatch".equals(f.reason()));
    }

    @Test
    void anSniThatNamesAnotherHostIsRefused() throws Exception {
        InetAddress address = lookUp("api.test");
        int before = up.tls.requests.size();
        assertThat(tryRequest(address, "other.test")).isFalse();
        assertThat(up.tls.requests).hasSize(before);
        proxy.events.await("tunnel_end", f -> "sni_mismatch".equals(f.reason()));
    }

    @Test
    void aSyntheticAddressNoNameWasGivenReachesNothing() throws Exception {
        InetAddress never = InetAddress.getByName("198.19.200.7");
        int before = up.tls.connections.get();
        assertThat(tryRequest(never, "api.test")).isFalse();
        assertThat(up.tls.connections.get()).isEqualTo(before);
        AuditFields refused = proxy.events.await("connect", f -> "unknown_synthetic_address".equals(f.reason())
                && "198.19.200.7".equals(f.host()));
        assertThat(refused.arrival()).isEqualTo("transparent");
        assertThat(refused.decision()).isEqualTo("deny");
    }

    @Test
    void anIpLiteralDestinationIsDecidedLikeAnIpLiteralConnect() throws Exception {
        int before = up.tls.connections.get();
        assertThat(tryRequest(InetAddress.getByName("127.0.0.1"), "api.test")).isFalse();
        assertThat(up.tls.connections.get()).isEqualTo(before);
        AuditFields refused = proxy.events.await("connect", f -> "127.0.0.1".equals(f.host()));
        assertThat(refused.decision()).isEqualTo("deny");
    }

    @Test
    void aConnectionWithoutTheHeaderIsClosedUnread() throws Exception {
        InetSocketAddress listener = proxy.proxy.transparentAddress().orElseThrow();
        try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write("GET / HTTP/1.1\r\nHost: api.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(raw.getInputStream().read()).isEqualTo(-1);
        }
        proxy.events.await("connect", f -> "bad_transparent_header".equals(f.reason()));
    }

    @Test
    void aSyntheticAddressAnotherClientLookedUpReachesNothing() throws Exception {
        InetAddress address = lookUp("api.test");         // asked from 127.0.0.1
        InetSocketAddress listener = proxy.proxy.transparentAddress().orElseThrow();
        int before = up.tls.connections.get();
        try (Socket raw = new Socket()) {
            raw.bind(new InetSocketAddress("127.0.0.2", 0));   // another client, which never asked
            raw.connect(listener, 10_000);
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header(address, up.tls.port()));
            assertThat(raw.getInputStream().read()).isEqualTo(-1);
        }
        assertThat(up.tls.connections.get()).isEqualTo(before);
        AuditFields refused = proxy.events.await("connect", f -> "unknown_synthetic_address".equals(f.reason())
                && f.client().startsWith("127.0.0.2:"));
        assertThat(refused.host()).isEqualTo(address.getHostAddress());
    }

    @Test
    void aClientDialingTheConnectionTrackingListenerItselfIsRefusedUnread() throws Exception {
        Prerequisites.require("native transport", dev.sallyport.proxy.connect.OriginalDestination.CONNECTION_TRACKING
                .readable(), "Linux with Netty's epoll transport and native access");
        try (ProxyFixture kernel = ProxyFixture.startWithCapture(ProxyFixture.policy(up.root, "api.test:"
                        + up.tls.port(), "", "  - name: api\n    hosts: [api.test]\n    ports: [" + up.tls.port()
                        + "]\n"), new MapResolver().map("api.test", "127.0.0.1"), up.dir,
                new ProxyOptions.Capture(null, new dev.sallyport.policy.HostPort("127.0.0.1", 0), false,
                        dev.sallyport.proxy.connect.OriginalDestination.CONNECTION_TRACKING))) {
            InetSocketAddress listener = kernel.proxy.transparentAddress().orElseThrow();
            assertThat(kernel.proxy.dnsAddress()).isEmpty();
            int before = up.tls.connections.get();
            try (Socket raw = new Socket(listener.getAddress(), listener.getPort())) {
                raw.setSoTimeout(10_000);
                raw.getOutputStream().write(header(InetAddress.getByName("127.0.0.1"), up.tls.port()));
                assertThat(closedUnanswered(raw)).as("a PROXY header is not believed here").isTrue();
            }
            assertThat(up.tls.connections.get()).isEqualTo(before);
            AuditFields refused = kernel.events.await("connect", f -> "not_redirected".equals(f.reason()));
            assertThat(refused.arrival()).isEqualTo("transparent");
            assertThat(refused.decision()).isEqualTo("deny");
        }
    }

    @Test
    void aConnectionOverItsClientsLimitIsRecordedAsTransparent() throws Exception {
        try (ProxyFixture limited = ProxyFixture.startWithCapture(ProxyFixture.policy(up.root, "", "  limits: "
                        + "{max_connections_per_client: 1}\n", "  - name: api\n    hosts: [api.test]\n"),
                new MapResolver(), up.dir)) {
            InetSocketAddress listener = limited.proxy.transparentAddress().orElseThrow();
            try (Socket first = new Socket(listener.getAddress(), listener.getPort())) {
                dev.sallyport.testing.Await.until("the first connection counted", Duration.ofSeconds(10),
                        () -> limited.events.events.stream().anyMatch(e -> e instanceof ProxyEvent.ConnectionOpened));
                Socket second = new Socket(listener.getAddress(), listener.getPort());
                second.setSoTimeout(10_000);
                assertThat(readAll(second.getInputStream())).startsWith("HTTP/1.1 429");
                second.close();
                assertThat(first.isConnected()).isTrue();
            }
            AuditFields refused = limited.events.await("connection",
                    f -> "client_connection_limit".equals(f.reason()));
            assertThat(refused.arrival()).isEqualTo("transparent");
        }
    }

    /** True when the proxy closed the connection without a byte (a reset, when the client's bytes went unread). */
    static boolean closedUnanswered(Socket raw) throws IOException {
        try {
            return raw.getInputStream().read() == -1;
        } catch (java.net.SocketException e) {
            return e.getMessage() != null && e.getMessage().contains("reset");
        }
    }

    static boolean tryRequest(InetAddress destination, String sni) {
        try {
            return request(destination, sni, "none").startsWith("HTTP/1.1 200");
        } catch (IOException e) {
            return false;
        }
    }
}
