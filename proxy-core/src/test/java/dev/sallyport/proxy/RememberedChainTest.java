package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The proxy remembers upstream certificate chains it has validated (so another host under the same certificate
 * skips the path validation), from the attacker's side: a remembered chain still reaches only the hosts its
 * certificate names. One upstream, one certificate for {@code *.wild.test} and {@code named.test}; every other
 * name below resolves to that same upstream, so each would be served that same, already remembered, chain.
 */
class RememberedChainTest {

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        upstream = EchoUpstream.https(pki.issue("*.wild.test", "named.test"));
        MapResolver resolver = new MapResolver();
        for (String host : List.of("a.wild.test", "b.wild.test", "named.test", "evil.test", "deep.a.wild.test",
                "wild.test")) {
            resolver.map(host, "127.0.0.1");
        }
        String rules = "  - name: all\n    hosts: [named.test, evil.test, wild.test, \"*.wild.test\", \"*.a.wild.test\"]"
                + "\n    ports: ["
                + upstream.port() + "]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + upstream.port(), "",
                rules), resolver, dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    static String get(String host) {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("curl", "--http1.1", "-sS", "--max-time",
                "10", "-x", proxy.proxyUrl(), "--cacert", proxy.caPem.toString(), "-D", "-", "--noproxy", "",
                "https://" + host + ":" + upstream.port() + "/echo"), null);
        return r.stdout();
    }

    @Test
    void aRememberedChainReachesOnlyTheNamesItsCertificateHas() {
        assertThat(get("a.wild.test")).contains("HTTP/1.1 200");
        assertThat(get("b.wild.test")).as("same chain, another name under the wildcard").contains("HTTP/1.1 200");
        assertThat(get("named.test")).contains("HTTP/1.1 200");
        for (String host : List.of("evil.test", "deep.a.wild.test", "wild.test")) {
            assertThat(get(host)).as(host + " is not named by the remembered chain")
                    .contains("HTTP/1.1 502").contains("X-Sallyport-Reason: upstream_tls_failed");
        }
        assertThat(get("b.wild.test")).as("still served after the refusals").contains("HTTP/1.1 200");
    }
}
