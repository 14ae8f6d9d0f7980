package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Per-client limits and metrics on a shared proxy, from the attacker's side: every relayed sandbox connects from the
 * host's loopback, so the limits count each registered sandbox by its identity; sandbox A holding all its
 * connections or tunnels leaves B (same address) and anonymous clients their own, and anonymous clients stay counted
 * by address. The per-identity metrics name only the identities {@code proxy.metrics_identities} lists. A
 * sandbox's open connections close once its registration is forgotten or its lease runs out.
 */
class SandboxLimitsTest {

    static final int CONNECTIONS = 4;
    static final int TUNNELS = 2;
    static final String ADMIN = "admin-token-for-the-limits-test-0123";
    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static String target;
    static String tokenA;
    static String tokenB;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        upstream = EchoUpstream.http();
        target = "upstream.test:" + upstream.port();
        Path token = Files.writeString(dir.resolve("admin-token"), ADMIN + "\n");
        String rules = "  - {name: upstream, hosts: [upstream.test], ports: [" + upstream.port() + "]}\n";
        String extra = "  admin_token: {file: " + token + "}\n  metrics_identities: [sandbox-a]\n"
                + "  limits: {max_connections: 100, max_tunnels: 100, max_connections_per_client: " + CONNECTIONS
                + ", max_tunnels_per_client: " + TUNNELS + "}\n  timeouts: {idle: 60s, tls: 60s}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(null, target, extra, rules),
                new MapResolver().map("upstream.test", "127.0.0.1"), dir);
        tokenA = register("sandbox-a");
        tokenB = register("sandbox-b");
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    @BeforeEach
    void earlierConnectionsAreClosed() {
        var meter = proxy.proxy.metrics().registry().get("sallyport.connections.active").gauge();
        Await.until("no connection open", Duration.ofSeconds(10), () -> meter.value() == 0);
    }

    @Test
    void aSandboxHoldingItsConnectionLimitStopsNeitherAnotherSandboxNorAnonymousClientsFromTheSameAddress()
            throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket s = as(tokenA);                 // served once (so counted as A's), then A only holds it
                held.add(s);
                s.getOutputStream().write(("GET http://" + target + "/held HTTP/1.1\r\nHost: " + target
                        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                assertThat(RawClient.readHead(s.getInputStream())).startsWith("HTTP/1.1 200 ");
            }
            for (int i = 0; i < 3; i++) {
                try (Socket over = as(tokenA)) {
                    assertThat(RawClient.readAll(over.getInputStream())).startsWith("HTTP/1.1 429 ")
                            .contains("X-Sallyport-Reason: client_connection_limit");
                }
            }
            assertThat(get(tokenB, "/b")).as("sandbox B, also from 127.0.0.1").startsWith("HTTP/1.1 200 ");
            assertThat(get(null, "/anonymous")).as("an anonymous client on 127.0.0.1").startsWith("HTTP/1.1 200 ");
            assertThat(proxy.events.all("connection").stream()
                    .filter(f -> "client_connection_limit".equals(f.reason())))
                    .as("each refusal audited with A's identity").hasSize(3)
                    .allMatch(f -> f.status() == 429 && "sandbox-a".equals(f.identity()));
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        earlierConnectionsAreClosed();
        assertThat(get(tokenA, "/a-again")).as("A is served once it holds fewer").startsWith("HTTP/1.1 200 ");
    }

    @Test
    void anonymousClientsStayCountedByTheirAddress() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < CONNECTIONS; i++) {
                held.add(from("127.0.0.2"));
            }
            var meter = proxy.proxy.metrics().registry().get("sallyport.connections.active").gauge();
            Await.until("the held connections counted", Duration.ofSeconds(10), () -> meter.value() == CONNECTIONS);
            try (Socket over = from("127.0.0.2")) {
                assertThat(RawClient.readAll(over.getInputStream())).startsWith("HTTP/1.1 429 ");
            }
            assertThat(get(tokenA, "/a")).startsWith("HTTP/1.1 200 ");
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
    }

    @Test
    void aSandboxHoldingItsTunnelLimitLeavesAnotherSandboxItsTunnels() throws Exception {
        List<Socket> tunnels = new ArrayList<>();
        try {
            for (int i = 0; i < TUNNELS; i++) {
                Socket s = as(tokenA);
                assertThat(connect(s)).startsWith("HTTP/1.1 200 ");
                tunnels.add(s);
            }
            try (Socket over = as(tokenA)) {
                assertThat(connect(over)).startsWith("HTTP/1.1 429 ");
            }
            try (Socket b = as(tokenB)) {
                assertThat(connect(b)).as("B's tunnel").startsWith("HTTP/1.1 200 ");
            }
        } finally {
            for (Socket s : tunnels) {
                s.close();
            }
        }
    }

    @Test
    void perIdentityMetricsNameOnlyTheListedIdentitiesWhateverTheClientsSend() throws Exception {
        String c = register("job-4711");
        assertThat(get(tokenA, "/a-metrics")).startsWith("HTTP/1.1 200 ");
        assertThat(get(tokenB, "/b-metrics")).startsWith("HTTP/1.1 200 ");
        try (Socket s = as(c)) {           // a made-up identity in headers and in a second PROXY header
            s.getOutputStream().write(("GET http://" + target + "/c HTTP/1.1\r\nHost: " + target
                    + "\r\nX-Sallyport-Identity: attacker-chosen\r\nForwarded: for=attacker-chosen\r\n"
                    + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertThat(RawClient.readAll(s.getInputStream())).startsWith("HTTP/1.1 200 ");
        }
        assertThat(get(null, "/anonymous-metrics")).startsWith("HTTP/1.1 200 ");
        String scrape = RawClient.exchange(new InetSocketAddress("127.0.0.1", proxy.proxy.adminAddress().getPort()),
                "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        List<String> lines = scrape.lines().filter(l -> l.startsWith("sallyport_identity_")).toList();
        assertThat(lines).anyMatch(l -> l.startsWith("sallyport_identity_requests_total{")
                && l.contains("identity=\"sandbox-a\"") && l.contains("decision=\"allow\""));
        assertThat(lines).anyMatch(l -> l.startsWith("sallyport_identity_requests_total{")
                && l.contains("identity=\"other\"") && !l.endsWith(" 0.0"));
        assertThat(lines).anyMatch(l -> l.startsWith("sallyport_identity_requests_total{")
                && l.contains("identity=\"anonymous\""));
        assertThat(lines).anyMatch(l -> l.startsWith("sallyport_identity_bytes_total{")
                && l.contains("identity=\"sandbox-a\"") && l.contains("direction=\"down\""));
        assertThat(lines).as("identities other than the listed, anonymous and other").allSatisfy(l -> assertThat(
                l.replaceAll(".*identity=\"([^\"]*)\".*", "$1")).isIn("sandbox-a", "anonymous", "other"));
        assertThat(scrape).doesNotContain("attacker-chosen").doesNotContain("job-4711").doesNotContain("sandbox-b");
    }

    @Test
    void aForgottenSandboxsOpenConnectionsCloseWhenItsRunEndsOrItsLeaseRunsOut() throws Exception {
        String ended = register("sandbox-ended");
        String lapsed = register("sandbox-lapsed", 2);
        try (Socket endedTunnel = as(ended); Socket lapsedTunnel = as(lapsed); Socket b = as(tokenB)) {
            assertThat(connect(endedTunnel)).startsWith("HTTP/1.1 200 ");
            assertThat(connect(lapsedTunnel)).startsWith("HTTP/1.1 200 ");
            assertThat(connect(b)).startsWith("HTTP/1.1 200 ");
            try (HttpClient client = HttpClient.newHttpClient()) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + proxy.proxy.adminAddress().getPort() + "/sandboxes/sandbox-ended"))
                        .header("Authorization", "Bearer " + ADMIN).header("X-Sallyport-Sandbox-Token", ended)
                        .DELETE().build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            endedTunnel.setSoTimeout(10_000);
            assertThat(endedTunnel.getInputStream().read()).as("the forgotten sandbox's tunnel is closed")
                    .isEqualTo(-1);
            lapsedTunnel.setSoTimeout(15_000);
            assertThat(lapsedTunnel.getInputStream().read()).as("closed once the lease ran out").isEqualTo(-1);
            b.setSoTimeout(200);
            assertThatThrownBy(() -> b.getInputStream().read()).as("B's tunnel stays open")
                    .isInstanceOf(java.net.SocketTimeoutException.class);
        }
    }

    /** POST /sandboxes: the registration's token. */
    static String register(String identity) throws Exception {
        return register(identity, 120);
    }

    static String register(String identity, int leaseSeconds) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + proxy.proxy.adminAddress().getPort() + "/sandboxes?identity="
                + identity + "&lease=" + leaseSeconds);
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + ADMIN)
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
            return r.body().lines().filter(l -> l.startsWith("token ")).findFirst().orElseThrow().substring(6);
        }
    }

    static Socket from(String source) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(source, 0));
        s.connect(proxy.address(), 5000);
        s.setSoTimeout(5000);
        return s;
    }

    /** A connection as the sandbox's relay makes it: from 127.0.0.1, the identity header first. */
    static Socket as(String token) throws IOException {
        Socket s = from("127.0.0.1");
        s.getOutputStream().write(SandboxIdentityTest.identityHeader(token));
        return s;
    }

    /** One GET as the sandbox of {@code token} (null: anonymous, from 127.0.0.1). */
    static String get(String token, String path) throws IOException {
        try (Socket s = token == null ? from("127.0.0.1") : as(token)) {
            s.getOutputStream().write(("GET http://" + target + path + " HTTP/1.1\r\nHost: " + target
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return RawClient.readAll(s.getInputStream());
        }
    }

    static String connect(Socket s) throws IOException {
        s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        return RawClient.readHead(s.getInputStream());
    }
}
