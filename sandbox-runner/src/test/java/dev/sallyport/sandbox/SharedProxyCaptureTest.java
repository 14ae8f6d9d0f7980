package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Transparent capture of sandboxes attached to one running proxy ({@link SandboxRun.ProxyMode.Attached}), both at
 * once, with different rules and secrets, from inside each with the environment cleared ({@code env -i}): each
 * reaches its own host by capture ({@code curl --noproxy '*'}), its secret injected; the other's host is NXDOMAIN
 * (glibc's resolver, {@code dig} over UDP and over TCP) and its name is never resolved for real (the proxy's
 * resolver, the canary here, hears only names it dialed); the other's synthetic address and the other's
 * placeholder get nothing; a PROXY header sent from inside on a captured connection is refused; every record names
 * the sandbox and says {@code transparent}.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class SharedProxyCaptureTest {

    static final String HOST_A = "a.example.test";
    static final String HOST_B = "b.example.test";
    static final String CA_BUNDLE = "--cacert /etc/ssl/certs/ca-certificates.crt";

    @Test
    void twoAttachedSandboxesAreCapturedEachAsItself(Fixture f) throws Exception {
        Prerequisites.require("dig", new java.io.File("/usr/bin/dig").canExecute(),
                "dig (Debian: apt-get install bind9-dnsutils; scripts/install-deps.sh)");
        Prerequisites.require("ip and nft", dev.sallyport.sandbox.internal.CaptureRules.tools().isPresent(),
                "iproute2 and nftables (scripts/install-deps.sh)");
        TestPki pki = TestPki.create();
        Queue<String> asked = new ConcurrentLinkedQueue<>();
        try (HttpsSite siteA = HttpsSite.start(pki.issue(HOST_A)); HttpsSite siteB = HttpsSite.start(pki.issue(HOST_B));
             SharedProxyTest.Shared shared = start(f, pki, siteA, siteB, asked)) {
            run(f, shared, siteA, siteB, asked);
        }
    }

    /**
     * The shared proxy of the capture tests: {@link #HOST_A} (and the zone under it) for sandbox-a, {@link #HOST_B}
     * for sandbox-b, each on its site's port, a secret each; its resolver knows the two names (loopback) and records
     * in {@code asked} every name it resolved for real. The sites answer with who they are.
     */
    static SharedProxyTest.Shared start(Fixture f, TestPki pki, HttpsSite siteA, HttpsSite siteB,
                                        Queue<String> asked) throws Exception {
        siteA.route("/", e -> HttpsSite.respond(e, 200, "from a's host"));
        siteB.route("/", e -> HttpsSite.respond(e, 200, "from b's host"));
        Path token = Files.writeString(f.root.resolve("admin-token"), SharedProxyTest.ADMIN + "\n");
        Path secretA = Files.writeString(f.root.resolve("a.secret"), "real-value-of-a");
        Path secretB = Files.writeString(f.root.resolve("b.secret"), "real-value-of-b");
        Path audit = f.root.resolve("shared-audit.jsonl");
        int pa = siteA.port();
        int pb = siteB.port();
        Path policy = Files.writeString(f.root.resolve("shared.yaml"), """
                proxy:
                  admin_token: {file: %s}
                audit: {path: %s}
                upstream:
                  trust: [%s]
                network:
                  deny: default
                  allow_private: ["127.0.0.1:%d", "127.0.0.1:%d"]
                rules:
                  - {name: a-site, hosts: [%s], ports: [%d], clients: [sandbox-a]}
                  - {name: a-zone, hosts: ["*.zone.example.test"], clients: [sandbox-a]}
                  - {name: b-site, hosts: [%s], ports: [%d], clients: [sandbox-b]}
                secrets:
                  - {name: A_TOKEN, from: "file:%s", hosts: [%s, %s], headers: [Authorization], clients: [sandbox-a]}
                  - {name: B_TOKEN, from: "file:%s", hosts: [%s, %s], headers: [Authorization], clients: [sandbox-b]}
                """.formatted(token, audit, pki.rootPem(f.root), pa, pb, HOST_A, pa, HOST_B, pb,
                secretA, HOST_A, HOST_B, secretB, HOST_A, HOST_B));
        CertificateAuthority ca = CertificateAuthority.ephemeral("Shared capture test CA");
        SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(policy)).withCa(ca)
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(host -> {
                    asked.add(host);
                    return host.equals(HOST_A) || host.equals(HOST_B)
                            ? CompletableFuture.completedFuture(List.of(InetAddress.getLoopbackAddress()))
                            : CompletableFuture.failedFuture(new IllegalStateException("no such host " + host));
                }));
        return new SharedProxyTest.Shared(proxy, CaExport.pem(ca.certificate(), false), audit);
    }

    private static void run(Fixture f, SharedProxyTest.Shared shared, HttpsSite siteA, HttpsSite siteB,
                            Queue<String> asked) throws Exception {
        String a = "https://" + HOST_A + ":" + siteA.port();
        String b = "https://" + HOST_B + ":" + siteB.port();
        String label = randomLabel();
        Path wsA = SharedProxyTest.workspace(f, "ws-a");
        Path wsB = SharedProxyTest.workspace(f, "ws-b");
        String curl = "env -i /usr/bin/curl -sS --noproxy '*' " + CA_BUNDLE;
        String dig = "env -i /usr/bin/dig +tries=1 +time=3 ";
        // a stays attached until b is done with a's address and placeholder (both handed over by the test)
        String scriptA = String.join("; ",
                "printf %s \"$A_TOKEN\" > placeholder.txt",
                dig + "+notcp +short " + HOST_A + " A > address.txt",
                curl + " -H \"Authorization: Bearer $A_TOKEN\" " + a + "/a-own > own.txt 2>&1",
                "env -i /usr/bin/getent hosts " + HOST_B + "; echo $? > getent-b.txt",
                dig + "+notcp " + HOST_B + " A | grep -o 'status: [A-Z]*' > dig-udp-b.txt",
                // DNS over TCP: glibc's resolver with use-vc (dig binds its TCP socket first, which Landlock refuses)
                "env -i RES_OPTIONS=use-vc /usr/bin/getent hosts " + HOST_B + "; echo $? > tcp-b.txt",
                "env -i RES_OPTIONS=use-vc /usr/bin/getent ahostsv4 " + HOST_A + " | head -1 | cut -d' ' -f1"
                        + " > tcp-a.txt",
                dig + "+notcp +short " + label + ".zone.example.test A > label.txt",
                dig + "+notcp denied.example.test A | grep -o 'status: [A-Z]*' > denied.txt",
                curl + " -o /dev/null -w '%{http_code}' " + b + "/a-to-b > other.txt 2> other-err.txt; echo $? > other-exit.txt",
                // a PROXY v2 header with a made-up token, sent on a captured connection after the relay's
                "bash -c 'exec 3<>/dev/tcp/$(head -1 address.txt)/" + siteA.port() + "; printf \""
                        + forgedHeader() + "\" >&3; cat <&3' > forged.txt 2>&1",
                "n=0; while [ ! -e release ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done");
        String scriptB = String.join("; ",
                "n=0; while [ ! -e a-address.txt ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done",
                curl + " -H \"Authorization: Bearer $B_TOKEN\" " + b + "/b-own > own.txt 2>&1",
                dig + "+notcp " + HOST_A + " A | grep -o 'status: [A-Z]*' > dig-udp-a.txt",
                // a's own address, for a's name: what a was given is nothing to b
                curl + " -o /dev/null -w '%{http_code}' --resolve " + HOST_A + ":" + siteA.port()
                        + ":$(head -1 a-address.txt) " + a + "/b-via-a-address > via.txt 2> via-err.txt; echo $? > via-exit.txt",
                // a's placeholder on b's own captured connection
                curl + " -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer $(cat a-placeholder.txt)\" " + b
                        + "/b-with-a > stolen.txt 2>&1",
                "true");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            ByteArrayOutputStream errA = new ByteArrayOutputStream();
            ByteArrayOutputStream errB = new ByteArrayOutputStream();
            Future<Integer> runA = pool.submit(() -> SharedProxyTest.run(f, wsA,
                    shared.attach("sandbox-a", Optional.empty()), scriptA, errA));
            Future<Integer> runB = pool.submit(() -> SharedProxyTest.run(f, wsB,
                    shared.attach("sandbox-b", Optional.empty()), scriptB, errB));
            Await.until("sandbox a looked up its name and tried the forged header", Duration.ofSeconds(120),
                    () -> Files.exists(wsA.resolve("forged.txt")) || runA.isDone());
            Files.copy(wsA.resolve("placeholder.txt"), wsB.resolve("a-placeholder.txt"));
            Files.copy(wsA.resolve("address.txt"), wsB.resolve("a-address.txt"));
            int exitB = runB.get(120, TimeUnit.SECONDS);
            Files.writeString(wsA.resolve("release"), "");
            int exitA = runA.get(120, TimeUnit.SECONDS);
            assertThat(exitA).as(errA.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(exitB).as(errB.toString(StandardCharsets.UTF_8)).isZero();
        } finally {
            pool.shutdownNow();
        }
        String addressA = Files.readString(wsA.resolve("address.txt")).strip();
        assertThat(addressA).matches("198\\.1[89]\\.\\d+\\.\\d+");
        assertThat(wsA.resolve("own.txt")).hasContent("from a's host");
        assertThat(wsA.resolve("getent-b.txt")).hasContent("2");
        assertThat(wsA.resolve("dig-udp-b.txt")).hasContent("status: NXDOMAIN");
        assertThat(wsA.resolve("tcp-b.txt")).hasContent("2");
        assertThat(Files.readString(wsA.resolve("tcp-a.txt")).strip()).isEqualTo(addressA);
        assertThat(Files.readString(wsA.resolve("label.txt")).strip()).matches("198\\.1[89]\\.\\d+\\.\\d+");
        assertThat(wsA.resolve("denied.txt")).hasContent("status: NXDOMAIN");
        assertThat(wsA.resolve("other-exit.txt")).as("b's name does not resolve in a").hasContent("6");
        assertThat(Files.readString(wsA.resolve("forged.txt"))).doesNotContain("from a's host");
        assertThat(wsB.resolve("own.txt")).hasContent("from b's host");
        assertThat(wsB.resolve("dig-udp-a.txt")).hasContent("status: NXDOMAIN");
        assertThat(wsB.resolve("via.txt")).as("b connecting to a's address").hasContent("000");
        assertThat(Files.readString(wsB.resolve("via-exit.txt")).strip()).isNotEqualTo("0");
        assertThat(wsB.resolve("stolen.txt")).hasContent("403");

        assertThat(siteA.requests()).extracting(r -> r.target() + " " + r.header("authorization"))
                .containsExactly("/a-own Bearer real-value-of-a");
        assertThat(siteB.requests()).extracting(r -> r.target() + " " + r.header("authorization"))
                .containsExactly("/b-own Bearer real-value-of-b");
        // the names the proxy resolved for real: only the two it dialed, never a name that was refused
        assertThat(asked).containsOnly(HOST_A, HOST_B).noneMatch(n -> n.contains(label));

        List<String> records = shared.records();
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                "\"path\":\"/a-own\"", "\"arrival\":\"transparent\"", "\"secrets\":[\"A_TOKEN\"]"));
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                "\"identity\":\"sandbox-a\"", "\"host\":\"" + HOST_B + "\"", "\"answer\":\"NXDOMAIN\""));
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                "\"identity\":\"sandbox-a\"", "\"host\":\"" + HOST_A + "\"", "\"answer\":\"" + addressA + "\""));
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                "\"reason\":\"forged_proxy_header\"", "\"arrival\":\"transparent\""));
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                "\"host\":\"" + addressA + "\"", "\"reason\":\"unknown_synthetic_address\"",
                "\"arrival\":\"transparent\""));
        assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                "\"path\":\"/b-with-a\"", "\"reason\":\"secret_wrong_client\"", "\"arrival\":\"transparent\""));
        assertThat(records).filteredOn(r -> r.contains("\"event\":\"dns\"") && r.contains("\"host\":\"" + HOST_A))
                .allSatisfy(r -> assertThat(r).contains("\"arrival\":\"transparent\""));
    }

    /** PROXY v2, LOCAL, with a token TLV of 64 zeros: bytes for printf. */
    private static String forgedHeader() {
        return "\\x0d\\x0a\\x0d\\x0a\\x00\\x0d\\x0a\\x51\\x55\\x49\\x54\\x0a\\x20\\x00\\x00\\x43\\xe1\\x00\\x40"
                + "0".repeat(64);
    }

    private static String randomLabel() {
        SecureRandom random = new SecureRandom();
        StringBuilder label = new StringBuilder("x");
        while (label.length() < 63) {
            label.append(Character.forDigit(random.nextInt(36), 36));
        }
        return label.toString();
    }
}
