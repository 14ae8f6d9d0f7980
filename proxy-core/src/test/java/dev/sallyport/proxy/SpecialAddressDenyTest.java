package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.IpAddress;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.Canary;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Trust;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression (issue 11 item 2): the proxy dialed 192.0.0.192 (Oracle Cloud Classic metadata), 168.63.129.16
 * (Azure WireServer) and {@code ::ffff:0:a00:5} (IPv4-translated 10.0.0.5), by URL and by CONNECT, and
 * audited them as allowed. The rule here allows every address and port, so {@code network.deny: default}
 * alone stands between the attacker and each address.
 *
 * <p>Nothing may be dialed. By name, the name resolves to a loopback canary first and the denied address
 * second: a proxy that let the denied address pass would dial the canary (the first address), and the
 * canary would count it. By IP literal, a canary is bound on the address itself where the host has it (run
 * the class in a network namespace with these addresses on {@code lo} to have them all); elsewhere the
 * answer, the audit record and the absence of any upstream connection event show that no dial was made.
 */
class SpecialAddressDenyTest {

    static Canary loopback;
    static ProxyFixture proxy;
    static Trust trust;

    @BeforeAll
    static void start() throws Exception {
        loopback = Canary.bind(InetAddress.getLoopbackAddress(), 0);
        String yaml = "audit: {path: '-'}\nnetwork:\n  deny: default\n  allow_private: ['127.0.0.1:" + loopback.port()
                + "']\nrules:\n  - name: anything\n    cidrs: [0.0.0.0/0, '::/0']\n    ports: [" + loopback.port()
                + "]\n  - name: names\n    hosts: ['*.attack.test']\n    ports: [" + loopback.port() + "]\n";
        proxy = ProxyFixture.start(yaml, new MapResolver(), ProxyFixture.tempDir());
        trust = Trust.of(proxy.caPem);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        loopback.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "192.0.0.192", "168.63.129.16", "::ffff:0:a00:5", "::ffff:0:a9fe:a9fe", "192.0.0.170", "198.18.0.1",
        "198.51.100.7", "203.0.113.7", "192.88.99.1", "100.100.100.200", "2001:db8::7", "2001:2::7",
        "2001:20::7", "3fff::7", "5f00::7", "100::7", "64:ff9b:1::a9fe:a9fe", "fd20:ce::254",
        "2600:1f00::5efe:a9fe:a9fe",
    })
    void aDeniedAddressIsNeverDialedByUrlOrByConnectAsLiteralOrName(String address) throws Exception {
        String name = "n" + Integer.toHexString(address.hashCode()) + ".attack.test";
        proxy.resolver.map(name, "127.0.0.1", address);
        String literal = address.indexOf(':') >= 0 ? "[" + address + "]" : address;
        int port = loopback.port();
        int before = loopback.connections();
        try (Canary own = Canary.tryBind(InetAddress.ofLiteral(address), port)) {
            for (String host : List.of(literal, name)) {
                String target = host + ":" + port;
                assertDenied(RawClient.exchange(proxy.address(), "GET http://" + target + "/byurl HTTP/1.1\r\nHost: "
                        + target + "\r\n\r\n"), "/byurl", host);
                assertDenied(RawClient.throughTunnel(proxy.address(), trust, host, port, "GET /byconnect HTTP/1.1"
                        + "\r\nHost: " + target + "\r\nConnection: close\r\n\r\n"), "/byconnect", host);
            }
            assertThat(own == null ? 0 : own.connections()).as("connections to the canary on " + address).isZero();
        }
        assertThat(loopback.connections()).as("connections to the loopback canary (first address of " + name + ")")
                .isEqualTo(before);
        assertThat(proxy.events.events).noneMatch(e -> e instanceof ProxyEvent.UpstreamConnected);
    }

    private static void assertDenied(String answer, String path, String host) {
        assertThat(answer).as(host + path).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
        String normalized = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        String shown = normalized.indexOf(':') >= 0 ? IpAddress.parseStrict(normalized).orElseThrow().toString()
                : normalized;
        AuditFields f = proxy.events.await("request", e -> path.equals(e.path()) && shown.equals(e.host())
                && "private_address".equals(e.reason()));
        assertThat(f.decision()).isEqualTo("deny");
        assertThat(proxy.events.all("request")).filteredOn(e -> path.equals(e.path()) && shown.equals(e.host()))
                .allSatisfy(e -> assertThat(e.decision()).isEqualTo("deny"));
    }
}
