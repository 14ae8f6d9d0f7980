package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sandboxes attached to one running proxy ({@link SandboxRun.ProxyMode.Attached}), as a CI host runs them: each
 * registers with its own identity, reaches only the upstream its rules name, gets and uses only its own secret (the
 * other's placeholder from inside it is refused and never swapped), cannot pass as the other with a PROXY header or
 * request headers of its own, and is named in every audit record; a client on the host that connects to the
 * proxy's listener directly is anonymous; ten attached at once all work.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class SharedProxyTest {

    static final String ADMIN = "shared-proxy-admin-token-4f1e2d3c";

    /** Two upstreams (a's and b's) on loopback, recording "path Authorization" of each request. */
    record Upstream(HttpServer server, Queue<String> seen) implements AutoCloseable {
        static Upstream start(String body) throws IOException {
            Queue<String> seen = new ConcurrentLinkedQueue<>();
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            server.createContext("/", exchange -> {
                seen.add(exchange.getRequestURI().getPath() + " " + exchange.getRequestHeaders()
                        .getFirst("Authorization"));
                // one request per connection: the JDK server drops idle kept-alive connections under load, and a
                // pooled one it dropped would be a 502 that says nothing about identities
                exchange.getResponseHeaders().set("Connection", "close");
                exchange.sendResponseHeaders(200, bytes.length);
                exchange.getResponseBody().write(bytes);
                exchange.close();
            });
            server.setExecutor(Executors.newFixedThreadPool(4));
            server.start();
            return new Upstream(server, seen);
        }

        int port() {
            return server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /** The shared proxy: rules and secrets per identity, the admin token in a file, audit to a file. */
    record Shared(SallyportProxy proxy, byte[] caPem, Path audit) implements AutoCloseable {
        static Shared start(Fixture f, int portA, int portB) throws Exception {
            Path token = Files.writeString(f.root.resolve("admin-token"), ADMIN + "\n");
            Path a = Files.writeString(f.root.resolve("a.secret"), "real-value-of-a");
            Path b = Files.writeString(f.root.resolve("b.secret"), "real-value-of-b");
            Path audit = f.root.resolve("shared-audit.jsonl");
            Path file = Files.writeString(f.root.resolve("shared.yaml"), """
                    proxy:
                      admin_token: {file: %s}
                    audit: {path: %s}
                    network:
                      deny: default
                      allow_private: ["127.0.0.1:%d", "127.0.0.1:%d"]
                    rules:
                      - {name: a-upstream, cidrs: [127.0.0.1/32], ports: [%d], clients: [sandbox-a, tenant]}
                      - {name: b-upstream, cidrs: [127.0.0.1/32], ports: [%d], clients: [sandbox-b]}
                    secrets:
                      - {name: A_TOKEN, from: "file:%s", hosts: [127.0.0.1], headers: [Authorization],
                         allow_cleartext: true, clients: [sandbox-a, tenant]}
                      - {name: B_TOKEN, from: "file:%s", hosts: [127.0.0.1], headers: [Authorization],
                         allow_cleartext: true, clients: [sandbox-b]}
                    """.formatted(token, audit, portA, portB, portA, portB, a, b));
            Policy policy = PolicyLoader.load(file);
            CertificateAuthority ca = CertificateAuthority.ephemeral("Shared test CA");
            SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(policy).withCa(ca)
                    .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0)));
            return new Shared(proxy, CaExport.pem(ca.certificate(), false), audit);
        }

        SandboxRun.ProxyMode.Attached attach(String identity, Optional<String> policy) {
            return new SandboxRun.ProxyMode.Attached(proxy.address(), caPem, proxy.adminAddress(), ADMIN, identity,
                    policy, Duration.ofSeconds(30));
        }

        List<String> records() throws IOException {
            proxy.flushAudit();
            return Files.readAllLines(audit);
        }

        @Override
        public void close() {
            proxy.close();
        }
    }

    /** Runs {@code script} in {@code workspace}, attached as {@code mode}; the exit status and what it printed. */
    static int run(Fixture f, Path workspace, SandboxRun.ProxyMode mode, String script, ByteArrayOutputStream err)
            throws Exception {
        return SandboxRun.builder(List.of("sh", "-c", script), workspace).proxy(mode)
                .process(sandbox -> sandbox.hostHome(f.home).hostEnv(Map.of("TERM", "dumb"))).build()
                .run(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    static Path workspace(Fixture f, String name) throws IOException {
        return Files.createDirectories(f.root.resolve(name));
    }

    @Test
    void twoSandboxesEachReachOnlyTheirOwnHostWithOnlyTheirOwnSecretAndCannotPassAsTheOther(Fixture f)
            throws Exception {
        try (Upstream upA = Upstream.start("from a's upstream"); Upstream upB = Upstream.start("from b's upstream");
             Shared shared = Shared.start(f, upA.port(), upB.port())) {
            String a = "http://127.0.0.1:" + upA.port();
            String b = "http://127.0.0.1:" + upB.port();
            Path wsB = workspace(f, "ws-b");
            ByteArrayOutputStream errB = new ByteArrayOutputStream();
            int exitB = run(f, wsB, shared.attach("sandbox-b", Optional.empty()), String.join("; ",
                    "curl -sS --noproxy '' -H \"Authorization: Bearer $B_TOKEN\" " + b + "/b-own > own.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_code}' " + a + "/b-to-a > other.txt",
                    "printf %s \"$B_TOKEN\" > placeholder.txt", "env > env.txt"), errB);
            assertThat(exitB).as(errB.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(wsB.resolve("own.txt")).hasContent("from b's upstream");
            assertThat(wsB.resolve("other.txt")).hasContent("403");
            assertThat(Files.readString(wsB.resolve("env.txt"))).contains("B_TOKEN=").doesNotContain("A_TOKEN")
                    .doesNotContain("real-value-of");
            String placeholderB = Files.readString(wsB.resolve("placeholder.txt"));

            Path wsA = workspace(f, "ws-a");
            Files.writeString(wsA.resolve("b-placeholder.txt"), placeholderB);
            // the relay's header comes first, then the sandbox's own: a PROXY v2 header with a made-up token
            String forged = "\\x0d\\x0a\\x0d\\x0a\\x00\\x0d\\x0a\\x51\\x55\\x49\\x54\\x0a\\x20\\x00\\x00\\x43\\xe1\\x00\\x40"
                    + "0".repeat(64);
            ByteArrayOutputStream errA = new ByteArrayOutputStream();
            int exitA = run(f, wsA, shared.attach("sandbox-a", Optional.empty()), String.join("; ",
                    "curl -sS --noproxy '' -H \"Authorization: Bearer $A_TOKEN\" " + a + "/a-own > own.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_code}' " + b + "/a-to-b > other.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer $(cat b-placeholder.txt)\" "
                            + a + "/a-with-b > stolen.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_code}' -H 'X-Sallyport-Identity: sandbox-b' "
                            + "-H 'Forwarded: for=sandbox-b' " + b + "/a-as-b > header.txt",
                    "bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf \"" + forged + "GET " + b
                            + "/a-forged HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n\" >&3; cat <&3' > forged.txt 2>&1",
                    "true"), errA);
            assertThat(exitA).as(errA.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(wsA.resolve("own.txt")).hasContent("from a's upstream");
            assertThat(wsA.resolve("other.txt")).hasContent("403");
            assertThat(wsA.resolve("stolen.txt")).hasContent("403");
            assertThat(wsA.resolve("header.txt")).hasContent("403");
            assertThat(Files.readString(wsA.resolve("forged.txt"))).doesNotContain("from b's upstream");

            // a client on the host, straight to the listener: anonymous, and no rule names anonymous
            try (Socket direct = new Socket("127.0.0.1", shared.proxy().address().getPort())) {
                direct.setSoTimeout(10_000);
                direct.getOutputStream().write(("GET " + a + "/direct HTTP/1.1\r\nHost: 127.0.0.1:" + upA.port()
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                assertThat(new String(direct.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                        .startsWith("HTTP/1.1 403");
            }

            assertThat(upA.seen()).containsExactly("/a-own Bearer real-value-of-a");
            assertThat(upB.seen()).containsExactly("/b-own Bearer real-value-of-b");
            List<String> records = shared.records();
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                    "\"path\":\"/a-own\"", "\"secrets\":[\"A_TOKEN\"]"));
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                    "\"path\":\"/a-with-b\"", "\"reason\":\"secret_wrong_client\"", "\"secrets\":[\"B_TOKEN\"]"));
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                    "\"path\":\"/a-as-b\"", "\"decision\":\"deny\""));
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                    "\"reason\":\"forged_proxy_header\""));
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                    "\"path\":\"/b-to-a\"", "\"decision\":\"deny\""));
            assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"anonymous\"",
                    "\"path\":\"/direct\"", "\"decision\":\"deny\""));
            assertThat(shared.proxy().adminAddress()).isNotNull();
        }
    }

    /** A {@code /proc/self/status} field in KiB. */
    static long status(String field) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith(field + ":"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst().orElseThrow();
    }

    @Test
    void tenSandboxesAttachedAtOnceAllWork(Fixture f) throws Exception {
        try (Upstream up = Upstream.start("ok"); Upstream unused = Upstream.start("unused");
             Shared shared = Shared.start(f, up.port(), unused.port())) {
            String url = "http://127.0.0.1:" + up.port();
            ExecutorService pool = Executors.newFixedThreadPool(10);
            List<Future<Integer>> runs = new ArrayList<>();
            List<Path> workspaces = new ArrayList<>();
            List<ByteArrayOutputStream> errs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                Path ws = workspace(f, "ws-" + i);
                ByteArrayOutputStream err = new ByteArrayOutputStream();
                String id = "job-" + i;
                workspaces.add(ws);
                errs.add(err);
                // each stays attached (polling for the release file, bounded) until all ten are, for the memory figure
                runs.add(pool.submit(() -> run(f, ws, shared.attach(id, Optional.of("tenant")), String.join("; ",
                        "curl -sS --noproxy '' -H \"Authorization: Bearer $A_TOKEN\" " + url + "/" + id
                                + " > out.txt 2> curl.txt", "mv out.txt done.txt",
                        "n=0; while [ ! -e release ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done"), err)));
            }
            Await.until("ten sandboxes attached and answered", Duration.ofSeconds(200), () -> workspaces.stream()
                    .allMatch(ws -> Files.exists(ws.resolve("done.txt"))) || runs.stream().anyMatch(Future::isDone));
            System.out.printf("shared proxy with ten sandboxes attached: VmRSS %d MiB, VmHWM %d MiB (the test JVM: the "
                    + "proxy, its ten registrations and relays, and the test)%n", status("VmRSS") / 1024,
                    status("VmHWM") / 1024);
            for (Path ws : workspaces) {
                Files.writeString(ws.resolve("release"), "");
            }
            for (int i = 0; i < 10; i++) {
                int exit = runs.get(i).get(240, TimeUnit.SECONDS);
                String why = errs.get(i).toString(StandardCharsets.UTF_8) + Files.readString(workspaces.get(i)
                        .resolve("curl.txt")) + (exit == 0 ? "" : String.join("\n", shared.records()));
                assertThat(exit).as(why).isZero();
                assertThat(workspaces.get(i).resolve("done.txt")).hasContent("ok");
            }
            pool.shutdown();
            assertThat(up.seen()).hasSize(10).allSatisfy(s -> assertThat(s).endsWith(" Bearer real-value-of-a"));
            List<String> records = shared.records();
            for (int i = 0; i < 10; i++) {
                String id = "job-" + i;
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"" + id + "\"",
                        "\"path\":\"/" + id + "\"", "\"decision\":\"allow\""));
            }
        }
    }
}
