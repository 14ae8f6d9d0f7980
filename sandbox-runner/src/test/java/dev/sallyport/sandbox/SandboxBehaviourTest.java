package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.sandbox.internal.SandboxEnvironmentTest;
import dev.sallyport.testing.Prerequisites;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What the sandboxed command is given: the proxy, its exit status, stdio, signals, environment, trust files. */
@Timeout(120)
class SandboxBehaviourTest {
    @TempDir
    Path tmp;
    Fixture f;

    @BeforeEach
    void setUp() throws Exception {
        f = new Fixture(tmp);
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    @Test
    void theProxyAnswersInsideAndCurlUsesItFromTheEnvironment() throws Exception {
        Fixture.Run r = f.run("curl -sS -m 10 http://registry.example.com/pkg/x?y=1; echo exit=$?");
        assertThat(r.out()).contains("hello from the proxy", "exit=0");
        assertThat(f.proxyRequests).containsExactly("GET http://registry.example.com/pkg/x?y=1");
    }

    @Test
    void exitStatusStdinAndWorkspaceWritesPassThrough() throws Exception {
        Fixture.Run r = f.run(f.spec("cat > from-stdin.txt; cat from-stdin.txt; exit 7").build(),
                "typed on stdin\n".getBytes(StandardCharsets.UTF_8));
        assertThat(r.exit()).isEqualTo(7);
        assertThat(r.out()).isEqualTo("typed on stdin\n");
        assertThat(f.workspace.resolve("from-stdin.txt")).hasContent("typed on stdin");
    }

    @Test
    void aSignalDeathIsReportedAs128PlusTheSignal() throws Exception {
        assertThat(f.run("kill -KILL $$").exit()).isEqualTo(128 + 9);
    }

    @Test
    void closingTheSandboxSendsTermToTheCommand() throws Exception {
        SandboxSpec spec = f.spec("trap 'echo t > trapped; exit 3' TERM; echo ready; while :; do sleep 0.1; done").build();
        RunningSandbox sandbox = ProcessSandbox.start(spec, Stdio.pipes());
        try (BufferedReader out = sandbox.process().inputReader()) {
            CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> readLine(out));
            assertThat(ready.get(60, TimeUnit.SECONDS)).isEqualTo("ready");
            sandbox.close();
            assertThat(f.workspace.resolve("trapped")).as("the command's TERM trap ran").exists();
            assertThat(sandbox.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(sandbox.process().exitValue()).isEqualTo(3);
        } finally {
            sandbox.close();
        }
    }

    @Test
    void environmentHoldsOnlyWhatWeGiveAndPlaceholdersNeverValues() throws Exception {
        SandboxSpec spec = f.spec("env").passEnv("HOST_ONLY").passEnv("ABSENT_ONE")
                .placeholder("GITHUB_TOKEN", "sallyport-placeholder-GITHUB_TOKEN").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).contains("HOST_ONLY=host-value", "GITHUB_TOKEN=sallyport-placeholder-GITHUB_TOKEN",
                "HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128", "NODE_USE_ENV_PROXY=1",
                "SSL_CERT_FILE=/run/sallyport/ca-bundle.pem", "HOME=" + f.home, "TERM=dumb",
                "-Djavax.net.ssl.trustStore=/run/sallyport/truststore.p12").doesNotContain("ABSENT_ONE");

        Fixture.Run plain = f.run("env");
        assertThat(plain.out()).doesNotContain("HOST_ONLY").doesNotContain("host-value");
    }

    @Test
    void theCommandSeesExactlyTheSharedVariableListAndNothingElse() throws Exception {
        // env itself, no shell: a shell would add PWD and friends
        SandboxSpec spec = SandboxSpec.builder(List.of("env"), f.workspace, f.proxy.getAddress(), f.caPem)
                .hostHome(f.home).hostEnv(Map.of("TERM", "dumb", "HOST_ONLY", "host-value"))
                .passEnv("HOST_ONLY").placeholder("GITHUB_TOKEN", "ph").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        List<String> expected = new ArrayList<>(SandboxEnvironmentTest.PROCESS_BASE);
        expected.add("HOST_ONLY");
        expected.addAll(SandboxEnvironmentTest.ROUTING);
        expected.add("GITHUB_TOKEN");
        assertThat(r.out().lines().map(line -> line.substring(0, line.indexOf('='))))
                .containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void passingAVariableTheSandboxOwnsIsRefusedAndLeavesNothingBehind() throws Exception {
        Path tmpdir = Files.createDirectories(tmp.resolve("java-tmp"));
        String saved = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", tmpdir.toString());
        try {
            SandboxSpec spec = f.spec("true").passEnv("HTTPS_PROXY").build();
            assertThatThrownBy(() -> ProcessSandbox.start(spec, Stdio.pipes())).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("env HTTPS_PROXY: set by the sandbox");
        } finally {
            System.setProperty("java.io.tmpdir", saved);
        }
        try (var left = Files.list(tmpdir)) {
            assertThat(left).as("runtime folders left behind").isEmpty();
        }
    }

    @Test
    void aSecretCannotAlsoBePassedThroughFromTheHost() {
        assertThatThrownBy(() -> f.spec("true").passEnv("GITHUB_TOKEN").placeholder("GITHUB_TOKEN", "ph").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("GITHUB_TOKEN is a secret");
        assertThatThrownBy(() -> SandboxSpec.builder(java.util.List.of("true"), f.workspace,
                java.net.InetSocketAddress.createUnresolved("localhost", 3128), f.caPem).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: an address on the host's loopback");
    }

    @Test
    void noProcessInsideShowsHostVariablesOrHostProcesses() throws Exception {
        SandboxSpec spec = f.spec("ls /proc | grep -c '^[0-9]'; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'"
                + " | grep -c host-value; cat /proc/[0-9]*/cmdline | tr '\\0' ' '").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        String[] lines = r.out().split("\n");
        assertThat(Integer.parseInt(lines[0].trim())).as("processes visible inside").isLessThan(10);
        assertThat(lines[1].trim()).isEqualTo("0");
        assertThat(r.out()).doesNotContain("surefire").doesNotContain(String.valueOf(ProcessHandle.current().pid()) + " ");
    }

    @Test
    void theTrustBundleStartsWithOurCaAndHoldsSystemRoots() throws Exception {
        Fixture.Run r = f.run("grep -c 'BEGIN CERTIFICATE' \"$SSL_CERT_FILE\"; head -c 200 \"$CURL_CA_BUNDLE\";"
                + " test -s /run/sallyport/truststore.p12 && echo p12=ok");
        int count = Integer.parseInt(r.out().split("\n")[0].trim());
        assertThat(count).isGreaterThan(1);
        assertThat(r.out()).contains(new String(f.caPem, StandardCharsets.UTF_8).substring(0, 100)).contains("p12=ok");
    }

    @Test
    void requireLandlockRunsWhenTheKernelHasIt() throws Exception {
        Prerequisites.require("Landlock ABI " + LandlockProbe.FULL_ABI, LandlockProbe.abi() >= LandlockProbe.FULL_ABI,
                "this kernel has Landlock ABI " + LandlockProbe.abi());
        Fixture.Run r = f.run(f.spec("echo confined").requireLandlock(true).build(), new byte[0]);
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("confined\n");
        assertThat(LandlockProbe.describe(LandlockProbe.abi())).contains("TCP connect");
    }

    @Test
    void aMissingCommandExits127WithAReason() throws Exception {
        Fixture.Run r = f.run(SandboxSpec.builder(java.util.List.of("no-such-tool-here"), f.workspace,
                f.proxy.getAddress(), f.caPem).hostHome(f.home).build(), new byte[0]);
        assertThat(r.exit()).isEqualTo(127);
        assertThat(r.err()).contains("no-such-tool-here: cannot start inside the sandbox");
    }

    @Test
    void aSymlinkedProtectedPathIsRefused() throws Exception {
        Files.createSymbolicLink(f.workspace.resolve(".mcp.json"), tmp.resolve("elsewhere"));
        assertThatThrownBy(() -> ProcessSandbox.start(f.spec("true").build(), Stdio.pipes()))
                .isInstanceOf(SandboxException.class).hasMessageContaining(".mcp.json is a symbolic link");
    }

    @Test
    void theHomeFolderItselfIsNotAWorkspace() {
        SandboxSpec spec = SandboxSpec.builder(java.util.List.of("true"), f.home, f.proxy.getAddress(), f.caPem)
                .hostHome(f.home).build();
        assertThatThrownBy(() -> ProcessSandbox.start(spec, Stdio.pipes())).isInstanceOf(SandboxException.class)
                .hasMessageContaining("contains the home folder");
    }

    @Test
    void bubblewrapIsFoundWithItsVersion() throws Exception {
        BubblewrapProbe.Bubblewrap bwrap = BubblewrapProbe.require();
        assertThat(bwrap.path()).isExecutable();
        assertThat(bwrap.version()).matches("\\d+\\.\\d+(\\.\\d+)?");
        assertThat(BubblewrapProbe.tryNamespaces(bwrap)).isEmpty();
        BubblewrapProbe.Bubblewrap notBwrap = new BubblewrapProbe.Bubblewrap(Path.of("/bin/false"), "0.8.0", 0, 8);
        assertThat(BubblewrapProbe.tryNamespaces(notBwrap)).hasValueSatisfying(
                m -> assertThat(m).startsWith("bwrap: cannot create namespaces:"));
    }

    @Test
    void startingTakesBoundedTime() throws Exception {
        long start = System.nanoTime();
        assertThat(f.run("true").exit()).isZero();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.println("sandbox run of 'true' took " + took.toMillis() + " ms");
        assertThat(took).isLessThan(Duration.ofSeconds(30));
    }

    private static String readLine(BufferedReader reader) {
        try {
            return reader.readLine();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
