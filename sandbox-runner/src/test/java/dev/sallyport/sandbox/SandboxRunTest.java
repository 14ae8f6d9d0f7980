package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.sandbox.internal.SandboxEnvironmentTest;
import dev.sallyport.sandbox.vm.VmRuntime;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link SandboxRun}, the run API: what it refuses before anything starts, the VM backend's dry run, and whole runs
 * of the process sandbox with its own proxy (a real {@code SallyportProxy} deciding what the command inside sends)
 * and with a running one (the fixture's stand-in), as {@code sallyport run} makes them.
 */
@Timeout(120)
@ExtendWith(Fixture.Extension.class)
class SandboxRunTest {

    @Test
    void whatCannotRunIsRefusedInOneLineBeforeAnythingStarts(Fixture f) throws Exception {
        Policy policy = policy(f, "rules: []\n" + secrets(f, "API_TOKEN", "OTHER_TOKEN"));
        assertThatThrownBy(() -> SandboxRun.builder(List.of("true"), f.workspace).policy(policy).secret("NOPE")
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("secrets: 'NOPE' is not a secret of the policy (expected: one of API_TOKEN, OTHER_TOKEN)");
        assertThatThrownBy(() -> SandboxRun.builder(List.of("true"), f.workspace)
                .proxy(new SandboxRun.ProxyMode.Running(f.proxy.getAddress(), f.caPem, f.root))
                .backend(new SandboxRun.Backend.Nerdctl(VmRuntime.KATA, "debian:12", true)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("proxy: a running proxy the sandbox is not registered with, with the nerdctl "
                        + "backend (expected: the run's own proxy on the sandbox network's gateway, or a shared proxy");
        assertThatThrownBy(() -> SandboxRun.builder(List.of(), f.workspace).build())
                .hasMessage("command: empty (expected: a program and its arguments)");
    }

    @Test
    void aVmDryRunPrintsThePlanWithTheSharedVariablesAndStartsNoProxy(Fixture f) throws Exception {
        Path audit = f.root.resolve("audit.jsonl");
        Policy policy = policy(f, "rules: []\n" + secrets(f, "API_TOKEN"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        if (Prerequisites.isRoot()) {
            Files.setAttribute(f.workspace, "unix:uid", 1000);   // the guest never runs as root: a user's workspace
            Files.setAttribute(f.workspace, "unix:gid", 1000);
        }

        int exit = SandboxRun.builder(List.of("make", "test"), f.workspace).policy(policy)
                .proxy(new SandboxRun.ProxyMode.Own(Optional.of(audit)))
                .backend(new SandboxRun.Backend.Nerdctl(VmRuntime.KATA, "img.example/tools:1", true)).build()
                .run(stream(out), stream(err));

        String plan = out.toString(StandardCharsets.UTF_8);
        assertThat(exit).as(plan).isZero();
        assertThat(plan).contains("nerdctl network create --driver bridge", "\nnft -f - <<'EOF'\n",
                "# start the proxy listening on 10.213.", "--runtime io.containerd.kata.v2", "--cap-drop ALL",
                "-- img.example/tools:1 make test");
        for (String name : SandboxEnvironmentTest.ROUTING) {
            assertThat(plan).as(name).containsPattern(" -e '?" + name + "=");
        }
        assertThat(plan).containsPattern(" -e API_TOKEN=sallyport-ph-[a-z2-7]{26} ");
        assertThat(audit).as("a dry run starts no proxy").doesNotExist();
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void theProcessSandboxWithItsOwnProxyIsDecidedAndAuditedByIt(Fixture f) throws Exception {
        Queue<String> upstreamSaw = new ConcurrentLinkedQueue<>();
        HttpServer upstream = Fixture.recordingServer("hello from upstream", upstreamSaw);
        try {
            int port = upstream.getAddress().getPort();
            Policy policy = policy(f, """
                    network:
                      deny: default
                      allow_private: ["127.0.0.1:%d"]
                    rules:
                      - name: local-upstream
                        cidrs: [127.0.0.1/32]
                        ports: [%d]
                    """.formatted(port, port) + secrets(f, "API_TOKEN", "OTHER_TOKEN"));
            Path audit = f.root.resolve("audit.jsonl");
            String script = String.join("; ",
                    "curl -sS --noproxy '' http://127.0.0.1:" + port + "/ok > fetched.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_code}' http://denied.example.net/ > denied.txt",
                    "env > env.txt",
                    "exit 7");
            ByteArrayOutputStream err = new ByteArrayOutputStream();

            int exit = SandboxRun.builder(List.of("sh", "-c", script), f.workspace).policy(policy).secret("API_TOKEN")
                    .proxy(new SandboxRun.ProxyMode.Own(Optional.of(audit)))
                    .process(sandbox -> sandbox.hostHome(f.home).hostEnv(Map.of("TERM", "dumb"))).build()
                    .run(stream(new ByteArrayOutputStream()), stream(err));

            String notices = err.toString(StandardCharsets.UTF_8);
            assertThat(exit).as(notices).isEqualTo(7);
            assertThat(notices).startsWith("sallyport: sandbox proxy on 127.0.0.1:").contains(", audit log " + audit);
            assertThat(f.workspace.resolve("fetched.txt")).hasContent("hello from upstream");
            assertThat(upstreamSaw).containsExactly("GET /ok");
            assertThat(f.workspace.resolve("denied.txt")).hasContent("403");
            assertThat(Files.readString(audit)).contains("\"rule\":\"local-upstream\"")
                    .contains("\"host\":\"denied.example.net\"", "\"reason\":\"no_matching_rule\"");
            String env = Files.readString(f.workspace.resolve("env.txt"));
            assertThat(env).containsPattern("(?m)^API_TOKEN=sallyport-ph-[a-z2-7]{26}$")
                    .doesNotContain("OTHER_TOKEN").doesNotContain("real-value-of");
        } finally {
            upstream.stop(0);
        }
    }

    @Test
    void theProcessSandboxWithARunningProxyGetsTheStateDirectorysPlaceholders(Fixture f) throws Exception {
        Policy policy = policy(f, "rules: []\n" + secrets(f, "API_TOKEN"));
        Path state = Files.createDirectories(f.root.resolve("state"));
        String expected = Placeholders.forPolicy(policy, state).get("API_TOKEN");
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int exit = SandboxRun.builder(List.of("sh", "-c", "curl -sS http://registry.example.com/x > fetched.txt; "
                        + "printf %s \"$API_TOKEN\" > token.txt"), f.workspace).policy(policy)
                .proxy(new SandboxRun.ProxyMode.Running(f.proxy.getAddress(), f.caPem, state))
                .process(sandbox -> sandbox.hostHome(f.home)).build()
                .run(stream(new ByteArrayOutputStream()), stream(err));

        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(f.proxyRequests).containsExactly("GET http://registry.example.com/x");
        assertThat(f.workspace.resolve("token.txt")).hasContent(expected);
        assertThat(err.toString(StandardCharsets.UTF_8)).as("no proxy of its own").doesNotContain("sandbox proxy");
    }

    /** A policy from {@code yaml}, loaded from a file in the fixture's root. */
    private static Policy policy(Fixture f, String yaml) throws Exception {
        Path file = f.root.resolve("policy-" + System.nanoTime() + ".yaml");
        Files.writeString(file, yaml);
        return PolicyLoader.load(file);
    }

    /** A {@code secrets:} section with one file-backed secret per name, for hosts nobody calls. */
    private static String secrets(Fixture f, String... names) throws Exception {
        StringBuilder yaml = new StringBuilder("secrets:\n");
        for (String name : names) {
            Path value = Files.writeString(f.root.resolve(name + ".secret"), "real-value-of-" + name);
            yaml.append("  - name: ").append(name).append("\n    from: file:").append(value)
                    .append("\n    hosts: [api.example.com]\n    headers: [Authorization]\n");
        }
        return yaml.toString();
    }

    private static PrintStream stream(ByteArrayOutputStream bytes) {
        return new PrintStream(bytes, true, StandardCharsets.UTF_8);
    }
}
