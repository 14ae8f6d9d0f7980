package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TlsTestServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} end to end: its own proxy with an ephemeral CA, the real process sandbox (bubblewrap,
 * seccomp, Landlock), a real HTTPS upstream on loopback, and curl inside the sandbox.
 */
class RunCommandTest {

    @TempDir
    Path dir;

    @Test
    void allowedHttpsWorksDeniedIsRefusedAndAuditedWorkspaceWritableExitStatusPasses() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hello from upstream")) {
            Path workspace = Files.createDirectories(dir.resolve("ws"));
            Path audit = dir.resolve("audit.jsonl");
            Path policy = dir.resolve("p.yaml");
            Files.writeString(policy, CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), upstream.port(), "local-upstream", ""));
            String script = String.join("; ",
                    "curl -sS --noproxy '' https://127.0.0.1:" + upstream.port() + "/ok > fetched.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_connect}' https://denied.example.net/ > denied.txt",
                    "exit 7");
            ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                    Duration.ofSeconds(180), "run", "--policy", policy.toString(), "--workdir", workspace.toString(),
                    "--audit", audit.toString(), "--", "sh", "-c", script);
            assertThat(run.exit()).as(run.stderr()).isEqualTo(7);
            assertThat(Files.readString(workspace.resolve("fetched.txt"))).isEqualTo("hello from upstream");
            assertThat(Files.readString(workspace.resolve("denied.txt"))).isEqualTo("403");
            String log = Files.readString(audit);
            assertThat(log).contains("\"rule\":\"local-upstream\"", "\"status\":200")
                    .contains("\"host\":\"denied.example.net\"", "\"reason\":\"no_matching_rule\"");
            assertThat(dir.resolve("state")).satisfiesAnyOf(
                    p -> assertThat(p).doesNotExist(),
                    p -> assertThat(p.resolve("ca")).doesNotExist());
        }
    }

    @Test
    void thePolicysAuditPathIsUsedResolvedAgainstThePolicysFolderUnlessTheCommandCouldWriteIt() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path policies = Files.createDirectories(dir.resolve("policies"));
        Path policy = Files.writeString(policies.resolve("p.yaml"), "audit: {path: logs/run.jsonl}\nrules: []\n");
        Files.createDirectories(policies.resolve("logs"));
        String denied = "curl -sS -o /dev/null -w '%{http_connect}' https://denied.example.net/ > denied.txt; exit 0";
        Map<String, String> env = Map.of("SALLYPORT_HOME", dir.resolve("state").toString());
        ExternalProcess.Result run = CliProcess.run(env, Duration.ofSeconds(180), "run", "--policy", policy.toString(),
                "--workdir", workspace.toString(), "--", "sh", "-c", denied);
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stderr()).contains("audit log " + policies.resolve("logs/run.jsonl"));
        assertThat(Files.readString(policies.resolve("logs/run.jsonl"))).contains("\"host\":\"denied.example.net\"");

        Path inWorkspace = Files.writeString(workspace.resolve("p.yaml"), "audit: {path: audit.jsonl}\nrules: []\n");
        ExternalProcess.Result inside = CliProcess.run(env, Duration.ofSeconds(180), "run", "--policy",
                inWorkspace.toString(), "--workdir", workspace.toString(), "--", "sh", "-c", denied);
        assertThat(inside.exit()).as(inside.stderr()).isZero();
        assertThat(inside.stderr()).contains("sallyport: the policy's audit.path " + workspace.resolve("audit.jsonl")
                + " is inside " + workspace + ", which the command can write: the run's audit log goes to "
                + dir.resolve("state/runs")).contains("(--audit FILE chooses another)");
        assertThat(workspace.resolve("audit.jsonl")).doesNotExist();
        try (var runs = Files.list(dir.resolve("state/runs"))) {
            assertThat(runs.toList()).singleElement().satisfies(log -> assertThat(Files.readString(log))
                    .contains("\"host\":\"denied.example.net\""));
        }
    }

    @Test
    void withARunningProxyTheCommandGoesThroughItAndTheRunStartsNoneOfItsOwn() throws Exception {
        Queue<String> seen = new ConcurrentLinkedQueue<>();
        HttpServer standIn = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        standIn.createContext("/", exchange -> {
            seen.add(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            byte[] body = "from the running proxy".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        standIn.start();
        try {
            Path workspace = Files.createDirectories(dir.resolve("ws"));
            Path ca = TestPki.create().rootPem(dir);
            ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                    Duration.ofSeconds(180), "run", "--proxy", "127.0.0.1:" + standIn.getAddress().getPort(),
                    "--ca-cert", ca.toString(), "--workdir", workspace.toString(), "--", "sh", "-c",
                    "curl -sS http://registry.example.com/pkg > fetched.txt");
            assertThat(run.exit()).as(run.stderr()).isZero();
            assertThat(workspace.resolve("fetched.txt")).hasContent("from the running proxy");
            assertThat(seen).containsExactly("GET http://registry.example.com/pkg");
            assertThat(run.stderr()).doesNotContain("sandbox proxy on");
        } finally {
            standIn.stop(0);
        }
    }

    @Test
    void unknownBackendAndSecretAreUsageErrors() throws Exception {
        CliRun backend = CliRun.of("run", "--backend", "qemu", "--workdir", dir.toString(), "--", "true");
        assertThat(backend.exit()).isEqualTo(2);
        assertThat(backend.err()).contains("--backend: 'qemu' (expected: process or nerdctl)");

        CliRun image = CliRun.of("run", "--backend", "nerdctl", "--workdir", dir.toString(), "--", "true");
        assertThat(image.exit()).isEqualTo(2);
        assertThat(image.err()).contains("--image");
    }

    @Test
    void aSecretThePolicyDoesNotHaveIsAUsageErrorNamingTheFlagOnEitherBackend() throws Exception {
        Path policy = dir.resolve("p.yaml");
        Files.writeString(policy, """
                rules: []
                secrets:
                  - name: API_TOKEN
                    from: env:SALLYPORT_TEST_UNSET_VARIABLE_1
                    hosts: [api.example.com]
                    headers: [Authorization]
                """);
        for (String backend : List.of("process", "nerdctl")) {
            CliRun run = CliRun.of("run", "--policy", policy.toString(), "--backend", backend, "--image", "debian:12",
                    "--secret", "NOPE", "--audit", dir.resolve("audit.jsonl").toString(), "--workdir", dir.toString(),
                    "--", "true");
            assertThat(run.exit()).as(backend).isEqualTo(2);
            assertThat(run.err()).as(backend).isEqualTo(
                    "sallyport: --secret: 'NOPE' is not a secret of the policy (expected: one of API_TOKEN)\n");
        }
    }

    @Test
    void badLimitsAreUsageErrorsNamingTheFlag() {
        CliRun memory = CliRun.of("run", "--memory", "8gigs", "--workdir", dir.toString(), "--", "true");
        assertThat(memory.exit()).isEqualTo(2);
        assertThat(memory.err()).contains("--memory: '8gigs' (expected: a size like 512m, 8g or a number of bytes)");
        CliRun small = CliRun.of("run", "--memory", "64m", "--workdir", dir.toString(), "--", "true");
        assertThat(small.err()).contains("--memory: 67108864 bytes (expected: at least 128 MiB)");
        CliRun pids = CliRun.of("run", "--pids", "8", "--workdir", dir.toString(), "--", "true");
        assertThat(pids.exit()).isEqualTo(2);
        assertThat(pids.err()).contains("--pids: 8 (expected: at least 32)");
        CliRun tmpfs = CliRun.of("run", "--tmpfs-size", "1k", "--workdir", dir.toString(), "--", "true");
        assertThat(tmpfs.err()).contains("--tmpfs-size: 1024 bytes (expected: at least 1 MiB)");
    }

    @Test
    void limitsAndWhatTheRunLeftBehindAreReportedOnStderr() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        String script = String.join("; ",
                "df -k /tmp | tail -1",
                "mkdir -p sub/.vscode && echo '{}' > sub/.vscode/tasks.json",
                "python3 -c 'b = [b\"x\" * (16 << 20) for i in range(64)]' 2>/dev/null", // 1 GiB, every page written
                "echo hog=$?");
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(180), "run", "--workdir", workspace.toString(), "--memory", "200m", "--pids", "64",
                "--tmpfs-size", "32m", "--", "sh", "-c", script);
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stdout()).containsPattern("tmpfs +32768 ").containsPattern("hog=(1|137)");
        assertThat(run.stderr()).contains("sallyport: " + workspace.resolve("sub/.vscode")
                + ": protected name created or replaced in the sandbox");
        if (run.stdout().contains("hog=137")) {   // a cgroup held the sandbox: the kernel killed the hog
            assertThat(run.stderr()).contains("sallyport: the sandbox ran out of memory: the kernel killed 1 process at "
                    + "its memory limit of 200 MiB (--memory; ");
        }
        assertThat(workspace.resolve("sub/.vscode.sallyport-quarantine/tasks.json")).exists();
    }

    @Test
    void aScratchFolderIsWritableInsideAndUnchangedAfterAndAMissingOneIsAUsageErrorInOneLine() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path config = Files.createDirectories(dir.resolve("tool-config"));
        Files.writeString(config.resolve("settings.json"), "host\n");
        String script = "cat " + config + "/settings.json > seen.txt; echo sandbox > " + config + "/settings.json"
                + " && echo '*' > " + config + "/.gitignore && echo wrote > wrote.txt";
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(180), "run", "--workdir", workspace.toString(), "--scratch", config.toString(),
                "--", "sh", "-c", script);
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(workspace.resolve("seen.txt")).hasContent("host");
        assertThat(workspace.resolve("wrote.txt")).hasContent("wrote");
        assertThat(config.resolve("settings.json")).hasContent("host");
        try (var entries = Files.list(config)) {
            assertThat(entries.toList()).containsExactly(config.resolve("settings.json"));
        }

        Path missing = dir.resolve("no-such-folder");
        CliRun refused = CliRun.of("run", "--workdir", workspace.toString(), "--scratch", missing.toString(), "--",
                "true");
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).isEqualTo("sallyport: --scratch " + missing + ": does not exist (expected: an "
                + "existing folder)\n");
    }

    @Test
    void aPolicyThatIsNotARegularFileIsRefusedInOneLine() {
        // the run's proxy reads its policy again to follow edits: a pipe or device would hang it at start
        CliRun run = CliRun.of("run", "--policy", "/dev/null", "--workdir", dir.toString(), "--", "true");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("--policy: /dev/null is not a regular file").hasLineCount(1);
    }

    @Test
    void nerdctlDryRunPrintsEveryHostCommandAndRunsNone() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        if (Prerequisites.isRoot()) {
            Files.setAttribute(workspace, "unix:uid", 1000);   // the guest never runs as root: a user's workspace
            Files.setAttribute(workspace, "unix:gid", 1000);
        }
        Files.createDirectories(workspace.resolve(".git/hooks"));
        Files.writeString(workspace.resolve(".git/config"), "[core]\n");
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(120), "run", "--backend", "nerdctl", "--runtime", "kata", "--image", "img.example/tools:1",
                "--workdir", workspace.toString(), "--dry-run", "--", "make", "test");
        assertThat(run.exit()).as(run.stderr()).isZero();
        // the workspace guarded as in the process backend: .git writable but its hooks and config, the agent configs
        String ws = workspace.toString();
        assertThat(run.stdout()).contains("type=bind,src=" + ws + "/.git,dst=/workspace/.git ",
                "type=bind,src=" + ws + "/.git/hooks,dst=/workspace/.git/hooks,readonly",
                "type=bind,src=" + ws + "/.git/config,dst=/workspace/.git/config,readonly",
                "type=bind,src=" + ws + "/.mcp.json,dst=/workspace/.mcp.json,readonly");
        assertThat(workspace.resolve(".mcp.json")).as("a dry run leaves no mask behind").doesNotExist();
        ExternalProcess.Result strict = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(120), "run", "--backend", "nerdctl", "--image", "img.example/tools:1",
                "--workdir", workspace.toString(), "--dry-run", "--git-read-only", "--", "make", "test");
        assertThat(strict.stdout()).contains("type=bind,src=" + ws + "/.git,dst=/workspace/.git,readonly");
        assertThat(run.stdout())
                .contains("nerdctl network create")
                .contains("nft ")
                .contains("--runtime io.containerd.kata.v2")
                .contains("--cap-drop ALL")
                .contains("img.example/tools:1");
        ExternalProcess.Result tables = ExternalProcess.run(Duration.ofSeconds(20), java.util.List.of("nft", "list", "tables"), null);
        java.util.regex.Matcher named = java.util.regex.Pattern.compile("sallyport_[0-9a-z]+").matcher(run.stdout());
        assertThat(named.find()).as("the dry run names its table: " + run.stdout()).isTrue();
        // other tests on the machine may hold tables of their own: this run's must not exist
        assertThat(tables.stdout()).as("a dry run creates no nftables table").doesNotContain(named.group());
    }

    @Test
    void nerdctlDryRunWithNoCapturePlansNoDnatNoRoutesAndSaysSoOwnProxyAndAttached() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws-no-capture"));
        if (Prerequisites.isRoot()) {
            Files.setAttribute(workspace, "unix:uid", 1000);
            Files.setAttribute(workspace, "unix:gid", 1000);
        }
        Path ca = Files.write(dir.resolve("nc-ca.pem"), dev.sallyport.ca.CaExport.pem(
                dev.sallyport.ca.CertificateAuthority.ephemeral("Shared test CA"), false));
        Path token = Files.writeString(dir.resolve("nc-admin-token"), "not-used-by-a-dry-run\n");
        List<String> common = List.of("run", "--backend", "nerdctl", "--image", "img.example/tools:1", "--workdir",
                workspace.toString(), "--dry-run", "--no-capture");
        List<String> attached = List.of("--proxy", "127.0.0.1:3128", "--proxy-admin", "127.0.0.1:1", "--ca-cert",
                ca.toString(), "--proxy-token", token.toString(), "--identity", "job-8");
        for (List<String> extra : List.of(List.<String>of(), attached)) {
            List<String> args = new java.util.ArrayList<>(common);
            args.addAll(extra);
            args.addAll(List.of("--", "true"));
            ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                    Duration.ofSeconds(120), args.toArray(String[]::new));
            assertThat(run.exit()).as(run.stderr()).isZero();
            assertThat(run.stderr()).contains(extra.isEmpty()
                    ? "sallyport: capture is off (--no-capture): the guest reaches only the proxy port"
                    : "sallyport: sandbox job-8 attached to the proxy at 127.0.0.1:3128; the gateway relays the "
                    + "guest's proxy connections to it; capture is off (--no-capture)");
            assertThat(run.stdout()).as(run.stdout()).doesNotContain("dnat").doesNotContain("IPAM routes")
                    .doesNotContain(":3129").doesNotContain(":3130")
                    .containsPattern("\t\tip daddr 10\\.213\\.\\d+\\.1 tcp dport 3128 accept\n");
        }
    }

    @Test
    void nerdctlDryRunWithProxyPlansTheGatewayRelayToTheSharedProxyAndRegistersNothing() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws-attached"));
        if (Prerequisites.isRoot()) {
            Files.setAttribute(workspace, "unix:uid", 1000);
            Files.setAttribute(workspace, "unix:gid", 1000);
        }
        Path ca = Files.write(dir.resolve("shared-ca.pem"), dev.sallyport.ca.CaExport.pem(
                dev.sallyport.ca.CertificateAuthority.ephemeral("Shared test CA"), false));
        Path token = Files.writeString(dir.resolve("admin-token"), "not-used-by-a-dry-run\n");
        // nothing listens on port 1: a dry run that called the admin listener would fail
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(120), "run", "--backend", "nerdctl", "--image", "img.example/tools:1",
                "--workdir", workspace.toString(), "--dry-run", "--proxy", "127.0.0.1:3128", "--proxy-admin",
                "127.0.0.1:1", "--ca-cert", ca.toString(), "--proxy-token", token.toString(), "--identity", "job-7",
                "--", "make", "test");
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stderr()).contains("sallyport: sandbox job-7 attached to the proxy at 127.0.0.1:3128; "
                + "the gateway relays the guest's proxy connections, DNS and captured TCP to it");
        assertThat(run.stdout())
                .containsPattern("# register sandbox job-7 with the proxy's admin listener at 127\\.0\\.0\\.1:1, then "
                        + "start the relay on 10\\.213\\.\\d+\\.1:3128 to the proxy at 127\\.0\\.0\\.1:3128 \\(taking only "
                        + "10\\.213\\.\\d+\\.2, presenting the registration's token\\); captured TCP on "
                        + "10\\.213\\.\\d+\\.1:3129 \\(with its original destination\\) and DNS on 10\\.213\\.\\d+\\.1:3130 go "
                        + "the same way")
                .containsPattern("--network sallyport-[0-9a-f]+ --ip 10\\.213\\.\\d+\\.2 --dns 10\\.213\\.\\d+\\.1")
                .containsPattern("-e HTTPS_PROXY=http://10\\.213\\.\\d+\\.1:3128")
                .doesNotContain("start the proxy listening");

        // no admin token (none under SALLYPORT_HOME, none given): the VM backend has no unregistered mode
        ExternalProcess.Result unregistered = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(120), "run", "--backend", "nerdctl", "--image", "img.example/tools:1", "--workdir",
                workspace.toString(), "--dry-run", "--proxy", "127.0.0.1:3128", "--ca-cert", ca.toString(), "--", "true");
        assertThat(unregistered.exit()).isEqualTo(2);
        assertThat(unregistered.stderr()).contains("--proxy: with --backend nerdctl the sandbox must register with the "
                + "proxy (expected: --proxy-token FILE with the proxy's admin token, or --identity NAME)");
    }
}
