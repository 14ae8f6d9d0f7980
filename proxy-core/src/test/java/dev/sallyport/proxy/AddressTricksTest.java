package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.RawClient;
import java.net.ServerSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DEFENCES.md class 3 with a rule that allows every address, so only {@code network.deny}, the strict literal
 * parsing and the self check stand between the attacker and the loopback upstream.
 */
class AddressTricksTest {

    static EchoUpstream upstream;
    static SallyportProxy proxy;
    static int adminPort;

    @BeforeAll
    static void start() throws Exception {
        upstream = EchoUpstream.http();
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            adminPort = free.getLocalPort();
        }
        String yaml = "audit: {path: '-'}\nnetwork:\n  deny: default\n  allow_private: [127.0.0.1/32:" + adminPort
                + "]\nrules:\n  - name: anything\n    cidrs: [0.0.0.0/0, '::/0']\n    ports: [" + upstream.port() + ", "
                + adminPort + "]\n";
        proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "tricks.yaml"))
                .withCa(CertificateAuthority.ephemeral("t")).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", adminPort)).withResolver(new MapResolver())
                .withListener(e -> { }));
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    static String get(String authority) {
        return RawClient.exchange(proxy.address(), "GET http://" + authority + "/ HTTP/1.1\r\nHost: " + authority
                + "\r\n\r\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "127.1.2.3"})
    void loopbackInEveryCanonicalFormIsDeniedAsPrivate(String host) {
        int before = upstream.requests.size();
        String response = get(host + ":" + upstream.port());
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
        assertThat(upstream.requests).hasSize(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0177.0.0.1", "2130706433", "0x7f.0.0.1", "127.1", "[fe80::1%25eth0]", "[::1%lo]"})
    void nonCanonicalLiteralsNeverReachADial(String host) {
        int before = upstream.requests.size();
        String response = get(host + ":" + upstream.port());
        assertThat(response).matches("(?s)HTTP/1\\.1 (400|403) .*");
        assertThat(response).doesNotContain("host=");
        assertThat(upstream.requests).hasSize(before);
    }

    @Test
    void theProxysOwnAdminListenerIsNeverDialedEvenWhenPolicyWouldAllowIt() {
        String response = get("127.0.0.1:" + adminPort);
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: proxy_self");
        assertThat(response).doesNotContain("sallyport_");
    }
}
