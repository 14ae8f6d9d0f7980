package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.RelayHeader;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Trust;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Transparent capture of sandboxes attached to one shared proxy, seen as their relays speak to its main listener
 * ({@link RelayHeader}) and from the attacker's side: each sandbox's DNS is answered by its own rules (a name only
 * the other's rules allow is NXDOMAIN), with addresses of its own; its transparent connections are decided and
 * injected as its own, and audited with its identity and {@code arrival: transparent}; the other's address, a
 * header without a token or with a made-up one, and a second PROXY header from inside get nothing, and each is
 * audited; a forgotten sandbox's addresses name nothing.
 */
class RelayedCaptureTest {

    static final String VALUE_A = SandboxIdentityTest.VALUE_A;
    static final String ADMIN = SandboxIdentityTest.ADMIN;
    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;
    static Map<String, String> a;
    static Map<String, String> b;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("a.test", "b.test", "shared.test");
        proxy = SandboxIdentityTest.startShared(up, """
                  - {name: a-only, hosts: [a.test], ports: [PORT], clients: [sandbox-a, sandbox-c]}
                  - {name: b-only, hosts: [b.test], ports: [PORT], clients: [sandbox-b]}
                  - {name: shared, hosts: [shared.test], ports: [PORT], clients: [sandbox-a, sandbox-b]}
                """);
        trust = Trust.of(proxy.caPem);
        a = SandboxIdentityTest.register(proxy, "sandbox-a", ADMIN);
        b = SandboxIdentityTest.register(proxy, "sandbox-b", ADMIN);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    /** One A question over a relayed DNS stream with {@code header}: the answer's rcode and address (or null). */
    record Answer(int rcode, InetAddress address) {}

    static Answer ask(byte[] header, String name) throws IOException {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(SandboxIdentityTest.concat(header, framedQuery(name)));
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] answer = new byte[in.readUnsignedShort()];
            in.readFully(answer);
            int rcode = answer[3] & 0x0f;
            int answers = ((answer[6] & 0xff) << 8) | (answer[7] & 0xff);
            InetAddress address = answers == 0 ? null : InetAddress.getByAddress(
                    java.util.Arrays.copyOfRange(answer, answer.length - 4, answer.length));
            return new Answer(rcode, address);
        }
    }

    /** One A question for {@code name}, its two-byte length first (DNS over TCP). */
    static byte[] framedQuery(String name) {
        ByteArrayOutputStream q = new ByteArrayOutputStream();
        q.writeBytes(new byte[] {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0});
        for (String label : name.split("\\.")) {
            q.write(label.length());
            q.writeBytes(label.getBytes(StandardCharsets.US_ASCII));
        }
        q.writeBytes(new byte[] {0, 0, 1, 0, 1});
        byte[] query = q.toByteArray();
        return ByteBuffer.allocate(2 + query.length).putShort((short) query.length).put(query).array();
    }

    static byte[] dns(Map<String, String> sandbox) {
        return RelayHeader.dns(sandbox.get("token"), false);
    }

    static byte[] transparent(InetAddress to, /* @Nullable */ Map<String, String> sandbox) {
        return RelayHeader.transparent(new InetSocketAddress(to, up.tls.port()),
                sandbox == null ? null : sandbox.get("token"));
    }

    /** {@code header}, then TLS with {@code sni} and one GET with {@code authorization}; the answer, "" if closed. */
    static String request(byte[] header, String sni, String authorization) throws IOException {
        int port = up.tls.port();
        try (Socket raw = new Socket("127.0.0.1", proxy.port())) {
            raw.setSoTimeout(10_000);
            raw.getOutputStream().write(header);
            try (SSLSocket tls = (SSLSocket) trust.context.getSocketFactory().createSocket(raw, sni, port, true)) {
                SSLParameters params = tls.getSSLParameters();
                params.setServerNames(List.of(new SNIHostName(sni)));
                tls.setSSLParameters(params);
                tls.getOutputStream().write(("GET /relayed HTTP/1.1\r\nHost: " + sni + ":" + port
                        + "\r\nAuthorization: " + authorization + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                tls.getOutputStream().flush();
                return readAll(tls.getInputStream());
            } catch (IOException closed) {
                return "";
            }
        }
    }

    static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        in.transferTo(all);
        return all.toString(StandardCharsets.UTF_8);
    }

    static ProxyEvent.DnsAnswered lookup(String identity, String name) {
        return Await.value("a dns record of " + identity + " for " + name, Duration.ofSeconds(10), () ->
                proxy.events.events.stream().filter(e -> e instanceof ProxyEvent.DnsAnswered d
                                && identity.equals(d.identity()) && name.equals(d.name()))
                        .map(ProxyEvent.DnsAnswered.class::cast).reduce((x, y) -> y).orElse(null));
    }

    @Test
    void eachSandboxsDnsIsAnsweredByItsOwnRulesWithAddressesOfItsOwn() throws Exception {
        Answer aOwn = ask(dns(a), "a.test");
        assertThat(aOwn.rcode()).isZero();
        assertThat(SyntheticAddresses.isSynthetic(aOwn.address())).isTrue();
        assertThat(ask(dns(a), "b.test").rcode()).as("only b's rules allow it").isEqualTo(3);
        assertThat(ask(dns(b), "a.test").rcode()).isEqualTo(3);
        Answer aShared = ask(dns(a), "shared.test");
        Answer bShared = ask(dns(b), "shared.test");
        assertThat(aShared.address()).isNotNull().isNotEqualTo(bShared.address());
        assertThat(ask(dns(a), "shared.test").address()).as("the same again").isEqualTo(aShared.address());
        assertThat(lookup("sandbox-a", "b.test").answer()).isEqualTo("NXDOMAIN");
        assertThat(lookup("sandbox-b", "shared.test").answer()).isEqualTo(bShared.address().getHostAddress());
    }

    @Test
    void aDnsStreamAnswersQuestionsThatArriveApart() throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(dns(a));
            DataInputStream in = new DataInputStream(s.getInputStream());
            for (String name : new String[] {"a.test", "shared.test", "b.test"}) {
                s.getOutputStream().write(framedQuery(name));
                s.getOutputStream().flush();
                byte[] answer = new byte[in.readUnsignedShort()];
                in.readFully(answer);
                assertThat(answer[3] & 0x0f).as(name).isEqualTo(name.equals("b.test") ? 3 : 0);
            }
        }
    }

    @Test
    void aDnsStreamFedOneByteAtATimeIsClosedAllTheSame() throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.getOutputStream().write(dns(a));
            assertThat(DnsConnectionLimitTest.trickle(s, Duration.ofSeconds(30))).as("closed within the stub's 10 s")
                    .isLessThan(20);
        }
    }

    @Test
    void aTransparentConnectionIsTheSandboxsOwnWithItsSecretAndAnotherSandboxsAddressReachesNothing()
            throws Exception {
        InetAddress mine = ask(dns(a), "shared.test").address();
        String answer = request(transparent(mine, a), "shared.test", "Bearer " + a.get("A_TOKEN"));
        assertThat(answer).startsWith("HTTP/1.1 200").doesNotContain(VALUE_A);
        assertThat(up.tls.requests).anySatisfy(r -> assertThat(r).contains("GET /relayed").contains(VALUE_A));
        AuditFields exchange = proxy.events.await("exchange", f -> "/relayed".equals(f.path())
                && "sandbox-a".equals(f.identity()));
        assertThat(exchange.arrival()).isEqualTo("transparent");
        assertThat(exchange.secrets()).containsExactly("A_TOKEN");

        // b's placeholder on a's transparent connection: refused, never swapped
        int before = up.tls.requests.size();
        assertThat(request(transparent(mine, a), "shared.test", "Bearer " + b.get("B_TOKEN")))
                .startsWith("HTTP/1.1 403").contains("secret_wrong_client");
        assertThat(up.tls.requests).hasSize(before);

        // b, connecting to a's address (b never asked for shared.test here, or asked and got its own)
        assertThat(request(transparent(mine, b), "shared.test", "Bearer " + b.get("B_TOKEN"))).isEmpty();
        AuditFields refused = proxy.events.await("connect", f -> "unknown_synthetic_address".equals(f.reason())
                && "sandbox-b".equals(f.identity()));
        assertThat(refused.arrival()).isEqualTo("transparent");
        assertThat(refused.host()).isEqualTo(mine.getHostAddress());
        assertThat(up.tls.requests).hasSize(before);
    }

    @Test
    void noTokenAMadeUpTokenOrAForgedHeaderFromInsideGetsNothingAndIsAudited() throws Exception {
        InetAddress mine = ask(dns(a), "a.test").address();
        int before = up.tls.requests.size();
        // a process on the host without a token: no transparent connection, no DNS answer of any identity
        assertThat(request(transparent(mine, null), "a.test", "x")).isEmpty();
        AuditFields noToken = proxy.events.await("connection", f -> "bad_proxy_header".equals(f.reason())
                && "transparent".equals(f.arrival()));
        assertThat(noToken.host()).isEqualTo(mine.getHostAddress());
        byte[] tokenless = RelayHeader.dns("", false);
        assertThat(dnsClosed(tokenless)).isTrue();
        String guessed = HexFormat.of().formatHex(new byte[32]);
        assertThat(dnsClosed(RelayHeader.dns(guessed, false))).isTrue();
        assertThat(request(transparent(mine, Map.of("token", guessed)), "a.test", "x")).isEmpty();
        proxy.events.await("connection", f -> "unknown_identity".equals(f.reason())
                && "transparent".equals(f.arrival()));

        // the sandbox's own bytes after its relay's header: a PROXY header naming the other sandbox
        byte[] twice = SandboxIdentityTest.concat(transparent(mine, a), RelayHeader.explicit(b.get("token")));
        assertThat(request(twice, "a.test", "x")).isEmpty();
        AuditFields forged = proxy.events.await("connection", f -> "forged_proxy_header".equals(f.reason())
                && "sandbox-a".equals(f.identity()));
        assertThat(forged.decision()).isEqualTo("deny");
        assertThat(up.tls.requests).hasSize(before);
    }

    /** Whether the proxy closes a DNS stream with {@code header} without an answer. */
    static boolean dnsClosed(byte[] header) throws IOException {
        try {
            ask(header, "a.test");
            return false;
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return true;
        }
    }

    @Test
    void aForgottenSandboxsAddressesNameNothing() throws Exception {
        Map<String, String> c = SandboxIdentityTest.register(proxy, "sandbox-c", ADMIN);
        InetAddress address = ask(dns(c), "a.test").address();
        assertThat(request(transparent(address, c), "a.test", "x")).startsWith("HTTP/1.1 200");
        HttpResponse<String> gone = SandboxIdentityTest.admin(HttpRequest.newBuilder(
                        SandboxIdentityTest.adminUri(proxy, "/sandboxes/sandbox-c"))
                .header("Authorization", "Bearer " + ADMIN).header("X-Sallyport-Sandbox-Token", c.get("token"))
                .DELETE());
        assertThat(gone.statusCode()).as(gone.body()).isEqualTo(200);
        Map<String, String> again = SandboxIdentityTest.register(proxy, "sandbox-c", ADMIN);
        assertThat(request(transparent(address, again), "a.test", "x")).as("a new registration owns nothing").isEmpty();
        proxy.events.await("connect", f -> "unknown_synthetic_address".equals(f.reason())
                && "sandbox-c".equals(f.identity()));
    }
}
