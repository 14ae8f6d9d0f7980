package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.CapturedStderr;
import dev.sallyport.proxy.testing.ClientHellos;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Oversized and malformed ClientHellos, and clients that reset mid-hello, through intercepted and passthrough
 * tunnels: each tunnel is refused and audited once and logs exactly one line (who, what, what was expected),
 * never a stack trace. The proxy's log output (slf4j-simple on stderr) is captured for the whole class.
 */
class HostileClientHelloTest {

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static CapturedStderr stderr;

    @BeforeAll
    static void start() throws Exception {
        stderr = CapturedStderr.install();
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        upstream = EchoUpstream.https(pki.issue("tls.test", "pass.test"));
        String rules = "  - name: tls\n    hosts: [tls.test]\n    ports: [" + upstream.port() + "]\n"
                + "  - name: pass\n    hosts: [pass.test]\n    ports: [" + upstream.port() + "]\n    tls: passthrough\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), "tls.test:" + upstream.port()
                + ", pass.test:" + upstream.port(), "  timeouts: {tls: 1s}\n", rules),
                new MapResolver().map("tls.test", "127.0.0.1").map("pass.test", "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
        stderr.close();
        assertThat(logText()).as("the proxy's log output was captured").contains("proxy listening");
        assertThat(stderr.stackTraceLines()).as("stack traces in the log").isEmpty();
    }

    static Stream<Arguments> hostileHellos() {
        Function<String, byte[]> oversized = host -> ClientHellos.records(ClientHellos.handshake(host, 100_000), 16_384);
        Function<String, byte[]> lyingLength = host -> ClientHellos.records(
                ClientHellos.concat(new byte[] {1, -1, -1, -1}, new byte[70_000]), 16_384);
        Function<String, byte[]> hugeRecord = host -> ClientHellos.concat(new byte[] {0x16, 3, 1, -1, -1},
                new byte[70_000]);
        Function<String, byte[]> garbage = host -> new byte[] {0x16, 3, 1, 0, 5, -1, -1, -1, -1, -1};
        Function<String, byte[]> notAHello = host -> ClientHellos.records(new byte[] {2, 0, 0, 4, 1, 2, 3, 4}, 16_384);
        Function<String, byte[]> stalled = host -> Arrays.copyOf(ClientHellos.records(ClientHellos.handshake(host, 0),
                16_384), 60);
        Function<String, byte[]> cutShort = host -> Arrays.copyOf(ClientHellos.records(ClientHellos.handshake(host, 0),
                16_384), 30);
        Function<String, byte[]> nothingInCommon = host -> ClientHellos.records(ClientHellos.handshake(host, 0),
                16_384);
        return Stream.of(
                Arguments.of("an oversized ClientHello (100 KB)", oversized, false, "client_hello_invalid"),
                Arguments.of("a ClientHello claiming 16 MiB", lyingLength, false, "client_hello_invalid"),
                Arguments.of("a record claiming 65535 bytes", hugeRecord, false, "sni_missing"),
                Arguments.of("garbage after the record header", garbage, false, "sni_missing"),
                Arguments.of("a handshake record that is no ClientHello", notAHello, false, "sni_missing"),
                Arguments.of("a ClientHello that stops half way", stalled, false, "client_tls_failed"),
                Arguments.of("a reset in the middle of the ClientHello", cutShort, true, "client_tls_failed"),
                Arguments.of("a ClientHello nothing can be agreed on", nothingInCommon, false, "client_tls_failed"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileHellos")
    void aHostileClientHelloIsOneAuditedRefusalAndOneLogLine(String what, Function<String, byte[]> hello,
                                                           boolean reset, String reason) throws Exception {
        for (String host : List.of("tls.test", "pass.test")) {
            if (what.contains("agreed on") && host.equals("pass.test")) {
                continue;   // passthrough relays a well-formed hello: what the upstream makes of it is not ours
            }
            String client = attack(host, hello.apply(host), reset);
            AuditFields refused = proxy.events.await("tunnel", f -> client.equals(f.client()));
            assertThat(refused.decision()).as(what + " via " + host).isEqualTo("deny");
            assertThat(refused.reason()).as(what + " via " + host).isEqualTo(reason);
            proxy.events.await("tunnel_end", f -> client.equals(f.client()));
            assertThat(proxy.events.all("tunnel").stream().filter(f -> client.equals(f.client())))
                    .as("one refusal record for " + what + " via " + host).hasSize(1);
            // the line may be written just after the records: wait for it, then check there is exactly one
            dev.sallyport.testing.Await.until("a log line for " + client, java.time.Duration.ofSeconds(5),
                    () -> logText().lines().anyMatch(l -> l.contains(client + " ")));
            List<String> lines = logText().lines().filter(l -> l.contains(client + " ")).toList();
            assertThat(lines).as("log lines for " + what + " via " + host).singleElement().asString()
                    .contains("client " + client + " => " + host + ":" + upstream.port() + ": tunnel refused: ")
                    .contains("(expected: ");
        }
    }

    @ParameterizedTest(name = "record type {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {0x17, 0x55})
    void aBadTlsRecordAfterTheHandshakeClosesTheTunnelWithAtMostOneLineAndNoStackTrace(int type) throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            String target = "tls.test:" + upstream.port();
            s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(RawClient.readHead(s.getInputStream())).startsWith("HTTP/1.1 200 ");
            String client = "127.0.0.1:" + s.getLocalPort();
            SSLSocket tls = (SSLSocket) Trust.of(proxy.caPem).context.getSocketFactory()
                    .createSocket(s, "tls.test", upstream.port(), false);
            tls.startHandshake();
            byte[] junk = new byte[45];
            junk[0] = (byte) type;
            junk[1] = 3;
            junk[2] = 3;
            junk[4] = 40;
            s.getOutputStream().write(junk);                 // under the TLS layer: not a record the session made
            s.getOutputStream().flush();
            try {   // and a real request after it, which makes the engine read the bad record at the latest
                tls.getOutputStream().write(("GET /x HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                tls.getOutputStream().flush();
            } catch (IOException closedOnUs) {
                // closed already: that is the point
            }
            RawClient.readAll(s.getInputStream());
            proxy.events.await("tunnel_end", f -> client.equals(f.client()));
            assertThat(logText().lines().filter(l -> l.contains(client + " "))).as("log lines").hasSizeLessThan(2);
        }
        assertThat(stderr.stackTraceLines()).isEmpty();
    }

    @org.junit.jupiter.api.Test
    void aClientHelloSentStraightToTheProxyPortIsOne400WithoutAStackTrace() {
        String answer = RawClient.exchange(proxy.address(), new String(ClientHellos.records(
                ClientHellos.handshake("tls.test", 0), 16_384), StandardCharsets.ISO_8859_1));
        assertThat(answer).startsWith("HTTP/1.1 400 ");
        assertThat(stderr.stackTraceLines()).isEmpty();
    }

    /** Opens a tunnel to host, sends bytes (then a reset when asked) and reads until the proxy closes. */
    private static String attack(String host, byte[] bytes, boolean reset) throws IOException {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            String target = host + ":" + upstream.port();
            s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(s.getInputStream().readNBytes(19), StandardCharsets.US_ASCII))
                    .isEqualTo("HTTP/1.1 200 OK\r\n\r\n");
            String client = "127.0.0.1:" + s.getLocalPort();
            try {
                s.getOutputStream().write(bytes);
                s.getOutputStream().flush();
                if (reset) {
                    s.setSoLinger(true, 0);
                    return client;
                }
                RawClient.readAll(s.getInputStream());
            } catch (IOException closedOnUs) {
                // the proxy may close while the rest of an oversized hello is still being written
            }
            return client;
        }
    }

    private static String logText() {
        return stderr.text();
    }
}
