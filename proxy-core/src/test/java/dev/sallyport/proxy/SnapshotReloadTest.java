package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Policy and secrets reload as one snapshot, shown under load. Two policies alternate: the first allows only
 * {@code a.test} and binds the secret (value one) to it, the second allows only {@code b.test} and binds it (value
 * two) there. Clients keep sending the placeholder to both hosts while the proxy reloads again and again. Every
 * answer must be what one policy alone would give: 200 with that policy's value at its host, or a refusal by the
 * rules (path_not_allowed). A request decided by one policy and injected from the other's secrets would be refused {@code
 * secret_wrong_host}, or carry the wrong value.
 */
class SnapshotReloadTest {

    static final int RELOADS = 60;
    static final int CLIENTS = 4;

    @Test
    void noRequestIsDecidedByOnePolicyAndInjectedFromTheOthersSecrets() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        TestPki.Issued cert = pki.issue("a.test", "b.test");
        Files.writeString(dir.resolve("one"), "value-one-0123456789\n");
        Files.writeString(dir.resolve("two"), "value-two-9876543210\n");
        try (LenientUpstream upstream = LenientUpstream.https(cert.key(), cert.chain(), LenientUpstream::echo)) {
            Path file = dir.resolve("policy.yaml");
            String one = policy(dir, pki, upstream, "a.test", "one");
            String two = policy(dir, pki, upstream, "b.test", "two");
            Files.writeString(file, one);
            CertificateAuthority ca = CertificateAuthority.ephemeral("snapshot test CA");
            Path caPem = dir.resolve("proxy-ca.pem");
            Files.write(caPem, CaExport.pem(ca, false));
            Trust trust = Trust.of(caPem);
            try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(file)).withCa(ca)
                    .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                    .withResolver(new MapResolver().map("a.test", "127.0.0.1").map("b.test", "127.0.0.1"))
                    .withPlaceholders(Placeholders.ephemeral()))) {
                String placeholder = proxy.secrets().placeholders().get("TOKEN");
                AtomicBoolean reloading = new AtomicBoolean(true);
                ConcurrentLinkedQueue<String> inconsistent = new ConcurrentLinkedQueue<>();
                AtomicInteger answered = new AtomicInteger();
                CountDownLatch done = new CountDownLatch(CLIENTS);
                long deadline = System.nanoTime() + 60_000_000_000L;
                for (int c = 0; c < CLIENTS; c++) {
                    String host = c % 2 == 0 ? "a.test" : "b.test";
                    Thread.ofPlatform().daemon().start(() -> {
                        try {
                            while (reloading.get() && System.nanoTime() < deadline) {
                                try (RawConnection tunnel = RawConnection.tunnel(proxy.address(), host, upstream.port(),
                                        trust.context)) {
                                    while (reloading.get() && System.nanoTime() < deadline
                                            && exchange(tunnel, upstream, host, placeholder, inconsistent, answered)) {
                                        // keep-alive until a refusal closes the tunnel
                                    }
                                }
                            }
                        } finally {
                            done.countDown();
                        }
                    });
                }
                for (int i = 0; i < RELOADS && System.nanoTime() < deadline; i++) {
                    int before = answered.get();
                    while (answered.get() < before + CLIENTS && System.nanoTime() < deadline) {
                        Thread.onSpinWait();     // let requests run between reloads
                    }
                    // replaced whole: the folder's watcher (woken by every audit write beside it) must not read
                    // the file half written, a policy with fewer rules that no request here is decided by
                    Path next = Files.writeString(dir.resolve("policy.yaml.next"), i % 2 == 0 ? two : one);
                    Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    assertThat(proxy.policies().reload().success()).as("reload " + i).isTrue();
                }
                reloading.set(false);
                done.await();
                assertThat(inconsistent).as("answers no single policy gives").isEmpty();
                assertThat(answered.get()).as("requests made while reloading").isGreaterThan(RELOADS);
                assertThat(upstream.received()).noneMatch(r -> r.requestLine().contains("/a")
                        && !"Bearer value-one-0123456789".equals(r.header("Authorization")));
                assertThat(upstream.received()).noneMatch(r -> r.requestLine().contains("/b")
                        && !"Bearer value-two-9876543210".equals(r.header("Authorization")));
            }
        }
    }

    /**
     * One request with the placeholder on a keep-alive tunnel; records what no single policy would answer. True
     * while the tunnel stays open.
     */
    private static boolean exchange(RawConnection tunnel, LenientUpstream upstream, String host, String placeholder,
                                    ConcurrentLinkedQueue<String> inconsistent, AtomicInteger answered) {
        String path = host.equals("a.test") ? "/a" : "/b";
        RawConnection.Response r = tunnel.send("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + upstream.port()
                + "\r\nAuthorization: Bearer " + placeholder + "\r\n\r\n").read();
        if (r == null) {
            inconsistent.add(host + ": no answer");
            return false;
        }
        answered.incrementAndGet();
        if (r.status() == 200) {
            return true;
        }
        if (!"path_not_allowed".equals(r.header("X-Sallyport-Reason"))) {
            inconsistent.add(host + ": " + r.status() + " " + r.header("X-Sallyport-Reason"));
        }
        return false;   // a refusal closes the connection
    }

    /**
     * Allows every path of {@code host} and binds the secret (from file {@code value}) to it; the other host's
     * tunnels stay open (a rule that matches no path) but its requests are refused by the rules.
     */
    private static String policy(Path dir, TestPki pki, LenientUpstream upstream, String host, String value) {
        String other = host.equals("a.test") ? "b.test" : "a.test";
        return "audit:\n  path: " + dir.resolve("audit.jsonl") + "\nupstream:\n  trust: [" + pki.rootPem(dir) + "]\n"
                + "network:\n  deny: default\n  allow_private: [\"127.0.0.1/32:" + upstream.port() + "\"]\n"
                + "rules:\n  - name: all-of-" + host + "\n    hosts: [" + host + "]\n    ports: [" + upstream.port() + "]\n"
                + "  - name: tunnel-only-" + other + "\n    hosts: [" + other + "]\n    ports: [" + upstream.port() + "]\n"
                + "    paths: [\"/none\"]\n"
                + "secrets:\n  - name: TOKEN\n    from: file:" + dir.resolve(value) + "\n    hosts: [" + host + "]\n"
                + "    headers: [Authorization]\n";
    }
}
