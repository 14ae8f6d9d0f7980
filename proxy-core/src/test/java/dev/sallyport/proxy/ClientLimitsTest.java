package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.CapturedStderr;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One client tries to take every connection or tunnel: it is held to its per-client limit (429, audited, counted,
 * one log line per episode) while another client, from another loopback address, is still served. Loopback
 * addresses 127.0.0.2 and up are two different clients to the proxy.
 */
class ClientLimitsTest {

    static final int PER_CLIENT_CONNECTIONS = 5;
    static final int PER_CLIENT_TUNNELS = 3;

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static CapturedStderr stderr;
    static String target;

    @BeforeAll
    static void start() throws Exception {
        stderr = CapturedStderr.install();
        dir = ProxyFixture.tempDir();
        upstream = EchoUpstream.http();
        target = "upstream.test:" + upstream.port();
        String rules = "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n";
        String limits = "  limits: {max_connections: 100, max_tunnels: 100, max_connections_per_client: "
                + PER_CLIENT_CONNECTIONS + ", max_tunnels_per_client: " + PER_CLIENT_TUNNELS + "}\n"
                + "  timeouts: {idle: 60s, tls: 60s}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(null, target, limits, rules),
                new MapResolver().map("upstream.test", "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
        stderr.close();
    }

    @BeforeEach
    void earlierConnectionsAreClosed() {
        awaitActive("sallyport.connections.active", 0);
    }

    @Test
    void aClientHoldingItsConnectionLimitIsRefused429WhileAnotherClientIsServed() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < PER_CLIENT_CONNECTIONS; i++) {
                held.add(from("127.0.0.2"));                        // idle: the attacker only holds them
            }
            awaitActive("sallyport.connections.active", PER_CLIENT_CONNECTIONS);
            for (int i = 0; i < 10; i++) {
                try (Socket over = from("127.0.0.2")) {
                    assertThat(RawClient.readAll(over.getInputStream())).startsWith("HTTP/1.1 429 ")
                            .contains("X-Sallyport-Reason: client_connection_limit");
                }
            }
            assertThat(get("127.0.0.3", "/other-client")).as("another client is still served")
                    .startsWith("HTTP/1.1 200 ");

            assertThat(proxy.events.all("connection").stream()
                    .filter(f -> "client_connection_limit".equals(f.reason()) && f.client().startsWith("127.0.0.2:")))
                    .as("each refusal audited").hasSize(10).allMatch(f -> f.status() == 429);
            assertThat(counter("connections")).isEqualTo(10.0);
            assertThat(logLines("client 127.0.0.2: ")).as("one log line for the episode").singleElement()
                    .asString().contains("5 open connections reached proxy.limits.max_connections_per_client")
                    .contains("429 client_connection_limit");
        } finally {
            closeAll(held);
        }
        awaitActive("sallyport.connections.active", 0);
        assertThat(get("127.0.0.2", "/after")).as("the client is served again once it holds fewer")
                .startsWith("HTTP/1.1 200 ");
    }

    @Test
    void aClientHoldingItsTunnelLimitIsRefused429WhileAnotherClientStillGetsATunnel() throws Exception {
        List<Socket> tunnels = new ArrayList<>();
        try {
            for (int i = 0; i < PER_CLIENT_TUNNELS; i++) {
                Socket s = from("127.0.0.4");
                assertThat(connect(s)).startsWith("HTTP/1.1 200 ");
                tunnels.add(s);
            }
            for (int i = 0; i < 4; i++) {
                try (Socket over = from("127.0.0.4")) {
                    String answer = connect(over) + RawClient.readAll(over.getInputStream());
                    assertThat(answer).startsWith("HTTP/1.1 429 ").contains("X-Sallyport-Reason: client_tunnel_limit");
                }
            }
            try (Socket other = from("127.0.0.5")) {
                assertThat(connect(other)).as("another client still gets a tunnel").startsWith("HTTP/1.1 200 ");
            }
            assertThat(proxy.events.all("connect").stream()
                    .filter(f -> "client_tunnel_limit".equals(f.reason()) && f.client().startsWith("127.0.0.4:")))
                    .as("each refusal audited").hasSize(4).allMatch(f -> f.status() == 429);
            assertThat(counter("tunnels")).isEqualTo(4.0);
            assertThat(logLines("client 127.0.0.4: ")).as("one log line for the episode").singleElement()
                    .asString().contains("3 open tunnels reached proxy.limits.max_tunnels_per_client");
        } finally {
            closeAll(tunnels);
        }
    }

    /** A connection from the given loopback address (a different client to the proxy for each address). */
    private static Socket from(String source) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(source, 0));
        s.connect(proxy.address(), 5000);
        s.setSoTimeout(5000);
        return s;
    }

    private static String get(String source, String path) throws IOException {
        try (Socket s = from(source)) {
            s.getOutputStream().write(("GET http://" + target + path + " HTTP/1.1\r\nHost: " + target
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return RawClient.readAll(s.getInputStream());
        }
    }

    /** Sends a CONNECT and reads the response head. */
    private static String connect(Socket s) throws IOException {
        s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        return RawClient.readHead(s.getInputStream());
    }

    private static void closeAll(List<Socket> sockets) throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
    }

    private static List<String> logLines(String prefix) {
        return stderr.text().lines().filter(l -> l.contains(prefix)).toList();
    }

    private static double counter(String limit) {
        return proxy.proxy.metrics().registry().get("sallyport.client.limit.refusals").tag("limit", limit).counter()
                .count();
    }

    private static void awaitActive(String gauge, int expected) {
        var meter = proxy.proxy.metrics().registry().get(gauge).gauge();
        Await.until(gauge + " reached " + expected, Duration.ofSeconds(10), () -> meter.value() == expected);
    }
}
