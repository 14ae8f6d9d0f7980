package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.sandbox.SandboxRun;
import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.sandbox.net.IsolationRules;
import dev.sallyport.sandbox.net.Ipv4Subnet;
import dev.sallyport.sandbox.net.RunMarkers;
import dev.sallyport.sandbox.net.SandboxNetwork;
import dev.sallyport.sandbox.net.SubnetPool;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link VmRunner} end to end on this host, with nerdctl replaced by a script (nerdctl cannot be installed here)
 * whose "containers" are network namespaces attached to the bridge by CNI's own plugins (bridge, host-local,
 * firewall, tuning), chained from the conflist nerdctl would write for the runner's {@code network create}. The
 * bridge, the nftables table, the proxy on the gateway, the probe and its parsing, the exit status, the table watch
 * and the teardown are the real runner's; so are the plugins' side effects on the host.
 */
class VmRunnerHostTest {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(30));

    static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");

    @TempDir
    Path dir;
    String forwardBefore;
    Path nerdctl;
    SandboxNetwork network;

    @BeforeEach
    void setUp() throws Exception {
        nerdctl = StandInNerdctl.write(dir);
        forwardBefore = Files.readString(IP_FORWARD).strip();
        List<Ipv4Subnet> used = SubnetPool.inUse();
        Ipv4Subnet subnet = null;
        for (int i = 0, start = ThreadLocalRandom.current().nextInt(256); i < 256 && subnet == null; i++) {
            Ipv4Subnet candidate = Ipv4Subnet.parse("10.231." + ((start + i) % 256) + ".0/24");
            subnet = used.stream().noneMatch(candidate::overlaps) ? candidate : null;
        }
        network = new SandboxNetwork("e" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24)),
                subnet, 3128);
    }

    @AfterEach
    void restoreForwarding() throws Exception {
        if (forwardBefore != null) {
            Files.writeString(IP_FORWARD, forwardBefore);  // CNI's bridge plugin (isGateway) turns it on
        }
    }

    NerdctlSpec spec(List<String> command) throws Exception {
        Path bundle = Files.writeString(dir.resolve("bundle.pem"), "not used by the stand-in\n");
        return NerdctlSpec.of(network, VmRuntime.RUNC, "debian:12", command, dir, new UserIds(1000, 1000), bundle)
                .with(ResourceLimits.DEFAULTS, false, nerdctl.toString());
    }

    @Test
    void workloadReachesOnlyTheProxyOnLinkAndItsExitStatusComesBack() throws Exception {
        String gw = network.gateway();
        NerdctlSpec spec = spec(List.of("bash", "-c",
                "[ -z \"$(ip route show default)\" ] && ip route show 198.18.0.0/15 | grep -qx '198.18.0.0/15 via "
                        + gw + " dev eth0 *' && read -r banner < /dev/tcp/" + gw + "/3128 "
                        + "&& [ \"$banner\" = proxy ] && ! (exec 3<>/dev/tcp/" + gw + "/8080) 2>/dev/null && exit 7"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        try {
            int exit = new VmRunner(spec, SHELL, markers, new PrintStream(bytes, true, StandardCharsets.UTF_8))
                    .execute(listen -> {
                        ServerSocket proxy = banner(listen, "proxy");
                        ServerSocket other = banner(new InetSocketAddress(listen.getAddress(), 8080), "other");
                        return () -> {
                            proxy.close();
                            other.close();
                        };
                    });

            assertThat(exit).as("the workload's own exit status (7 = no default route, the synthetic prefix routed "
                    + "via the gateway, proxy answered on-link, port 8080 refused)").isEqualTo(7);
            List<String> calls = Files.readAllLines(dir.resolve("state/calls.log"));
            assertThat(calls).hasSize(8);
            assertThat(calls.get(0)).isEqualTo("image inspect --format {{.ID}} -- debian:12");
            assertThat(calls.get(1)).startsWith("network create --driver bridge --internal --subnet "
                    + network.subnet());
            assertThat(calls.get(2)).isEqualTo("network inspect --mode=native " + network.networkName());
            assertThat(calls.get(3)).contains("--name " + network.networkName() + "-probe ");
            assertThat(calls.get(4)).contains("--name " + network.networkName() + " ").endsWith("exit 7");
            assertThat(calls.get(5)).startsWith("rm -f ");
            assertThat(calls.get(6)).isEqualTo("ps -a --filter label=dev.sallyport.sandbox=" + network.id()
                    + " --format {{.Names}}");
            assertThat(calls.get(7)).isEqualTo("network rm " + network.networkName());
            assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain("warning");
            if (forwardBefore.equals("0")) {
                assertThat(Files.readString(IP_FORWARD).strip())
                        .as("an --internal network's bridge plugin leaves the host's ip_forward alone").isEqualTo("0");
            }
            assertNothingLeft(markers);
        } finally {
            cleanupQuietly();
        }
    }

    @Test
    void withLiteralAddressesCapturedTheGuestIsRoutedViaTheGatewayAndTheHostStillForwardsNothing() throws Exception {
        network = network.withLiterals(dev.sallyport.policy.LiteralAddresses.CAPTURE);
        String gw = network.gateway();
        NerdctlSpec spec = spec(List.of("bash", "-c", "ip route show default | grep -qx 'default via " + gw
                + " dev eth0 *' && ip route show 198.18.0.0/15 | grep -qx '198.18.0.0/15 via " + gw + " dev eth0 *' "
                + "&& exit 7"));
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        try {
            int exit = new VmRunner(spec, SHELL, markers, new PrintStream(OutputStream.nullOutputStream()))
                    .execute(listen -> banner(listen, "proxy"));

            assertThat(exit).as("7 = a default route and the synthetic prefix, both via the gateway").isEqualTo(7);
            if (forwardBefore.equals("0")) {
                assertThat(Files.readString(IP_FORWARD).strip()).as("no isGateway: ip_forward left alone")
                        .isEqualTo("0");
            }
            assertNothingLeft(markers);
        } finally {
            cleanupQuietly();
        }
    }

    @Test
    void aContainerThatWillNotGoKeepsItsTableAndBridgeUntilItIsGone() throws Exception {
        Files.writeString(dir.resolve("state/rm-fails"), "");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        VmRunner runner = runsUntilKilled(markers, bytes);
        CompletableFuture<Integer> run = runInBackground(runner);
        try {
            Path workload = awaitWorkload();

            assertThat(runner.teardown()).as("what SIGTERM runs, while nerdctl rm -f fails").isFalse();

            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("warning: container " + network.networkName()
                    + " is still there (nerdctl rm -f exited 1: ", "kept network " + network.networkName());
            assertThat(SHELL.capture(HostCommand.of("nft", "list", "tables")).stdout()).contains(network.tableName());
            assertThat(Files.exists(Path.of("/sys/class/net", network.bridgeName()))).isTrue();
            assertThat(isolationRules()).as("CNI's firewall plugin added its per-bridge rules").isNotEmpty();
            assertThat(SandboxNetwork.IPAM_STATE.resolve(network.networkName())).isDirectory();

            Files.delete(dir.resolve("state/rm-fails"));
            SHELL.capture(HostCommand.of("kill", "-9", Files.readString(workload).strip()));
            assertThat(run.get(60, TimeUnit.SECONDS)).as("killed workload").isEqualTo(137);
            assertNothingLeft(markers);
        } finally {
            Files.deleteIfExists(dir.resolve("state/rm-fails"));
            run.cancel(true);
            cleanupQuietly();
        }
    }

    @Test
    void theTableVanishingDuringTheRunStopsTheSandbox() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        VmRunner runner = runsUntilKilled(markers, bytes);
        CompletableFuture<Integer> run = runInBackground(runner);
        try {
            awaitWorkload();

            SHELL.capture(HostCommand.of("nft", "delete", "table", "inet", network.tableName()));

            assertThatThrownBy(() -> run.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(VmRunException.class)
                    .cause().hasMessage("firewall table inet " + network.tableName() + " disappeared during the run "
                            + "(an 'nft flush ruleset', as a reload of nftables.service does?): it was loaded again at "
                            + "once and the sandbox stopped (expected: the table to stay until the run ends)");
            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("error: firewall table inet "
                    + network.tableName() + " disappeared; loading it again and stopping the sandbox");
            assertNothingLeft(markers);
        } finally {
            run.cancel(true);
            cleanupQuietly();
        }
    }

    @Test
    void noProxyOnTheGatewayStopsTheRunBeforeTheWorkload() throws Exception {
        NerdctlSpec spec = spec(List.of("bash", "-c", "echo workload-ran; exit 0"));
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        try {
            VmRunner runner = new VmRunner(spec, SHELL, markers, new PrintStream(OutputStream.nullOutputStream()));

            assertThatThrownBy(() -> runner.execute(ProxyHook.EXTERNAL))
                    .isInstanceOf(VmRunException.class)
                    .hasMessageStartingWith("probe: guest interfaces [eth0] cannot open a TCP connection to the "
                            + "proxy at " + network.gateway() + ":3128 (checked with bash");
            assertThat(Files.readAllLines(dir.resolve("state/calls.log")))
                    .noneMatch(call -> call.contains("workload-ran"));
            assertNothingLeft(markers);
        } finally {
            cleanupQuietly();
        }
    }

    @Test
    void anImageThisHostLacksIsPulledFirstInTheOpenAndAFailedPullStopsTheRun() throws Exception {
        Files.writeString(dir.resolve("state/no-image"), "");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        try {
            int exit = new VmRunner(spec(List.of("true")), SHELL, markers,
                    new PrintStream(bytes, true, StandardCharsets.UTF_8)).execute(listen -> banner(listen, "proxy"));

            assertThat(exit).isZero();
            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("pulling debian:12 (on the host, not "
                    + "through the sandbox's proxy)");
            List<String> calls = Files.readAllLines(dir.resolve("state/calls.log"));
            assertThat(calls.get(0)).isEqualTo("image inspect --format {{.ID}} -- debian:12");
            assertThat(calls.get(1)).isEqualTo("pull -- debian:12");
            assertThat(calls.get(2)).startsWith("network create");
            assertNothingLeft(markers);

            NerdctlSpec missing = new NerdctlSpec(network, VmRuntime.RUNC, "missing.example/none:1", List.of("true"),
                    dir, new UserIds(1000, 1000), dir.resolve("bundle.pem"), null, new java.util.TreeMap<>(),
                    ResourceLimits.DEFAULTS, false, nerdctl.toString());
            VmRunner failing = new VmRunner(missing, SHELL, markers, new PrintStream(OutputStream.nullOutputStream()));
            assertThatThrownBy(() -> failing.execute(ProxyHook.EXTERNAL)).isInstanceOf(VmRunException.class)
                    .hasMessage("image missing.example/none:1: nerdctl pull exited 1 (expected: an image this host can "
                            + "pull; try 'nerdctl pull missing.example/none:1')");
            List<String> later = Files.readAllLines(dir.resolve("state/calls.log"));
            assertThat(later.subList(later.indexOf("pull -- missing.example/none:1"), later.size()))
                    .as("no network and no container after the failed pull")
                    .noneMatch(call -> call.startsWith("network create") || call.startsWith("run "));
        } finally {
            cleanupQuietly();
        }
    }

    @Test
    void aNerdctlThatNamesBridgesDifferentlyStopsTheRunBeforeAnyContainer() throws Exception {
        Files.writeString(dir.resolve("state/old-naming"), "");
        RunMarkers markers = new RunMarkers(dir.resolve("markers"));
        try {
            VmRunner runner = new VmRunner(spec(List.of("true")), SHELL, markers,
                    new PrintStream(OutputStream.nullOutputStream()));

            assertThatThrownBy(() -> runner.execute(ProxyHook.EXTERNAL))
                    .isInstanceOf(VmRunException.class)
                    .hasMessage("network " + network.networkName() + ": nerdctl uses bridge 'nerdctl1' (expected: '"
                            + network.bridgeName() + "', the name the firewall rules key on; this nerdctl version "
                            + "names bridges differently)");
            assertThat(Files.readAllLines(dir.resolve("state/calls.log"))).noneMatch(call -> call.startsWith("run "));
            assertNothingLeft(markers);
        } finally {
            cleanupQuietly();
        }
    }

    @Test
    void aSandboxRunStartsItsOwnProxyOnTheGatewayAndThatProxyDecidesWhatTheWorkloadSends() throws Exception {
        Path code = dir.resolve("code.txt");
        Path audit = dir.resolve("audit.jsonl");
        Policy policy = PolicyLoader.load(Files.writeString(dir.resolve("policy.yaml"), "rules: []\n"));
        Files.setAttribute(dir, "unix:uid", 1000);   // the workload never runs as root: the workspace is a user's
        Files.setAttribute(dir, "unix:gid", 1000);
        String workload = "curl -sS -m 20 -o /dev/null -w '%{http_code}' --proxy \"$HTTP_PROXY\" "
                + "http://denied.example.net/ > " + code + "; exit 7";
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        int exit = SandboxRun.builder(List.of("bash", "-c", workload), dir).policy(policy)
                .proxy(new SandboxRun.ProxyMode.Own(Optional.of(audit)))
                .backend(new SandboxRun.Backend.Nerdctl(VmRuntime.RUNC, "debian:12", false, nerdctl.toString())).build()
                .run(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(OutputStream.nullOutputStream()));

        assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(7);
        assertThat(code).as("the run's own proxy answered on the gateway").hasContent("403");
        assertThat(Files.readString(audit)).contains("\"host\":\"denied.example.net\"", "\"reason\":\"no_matching_rule\"");
        List<String> calls = Files.readAllLines(dir.resolve("state/calls.log"));
        String id = calls.get(1).substring(calls.get(1).lastIndexOf(SandboxNetwork.NAME_PREFIX)
                + SandboxNetwork.NAME_PREFIX.length());
        assertThat(calls.get(4)).contains("-e HTTPS_PROXY=http://").contains(
                "dst=" + GuestEnvironment.GUEST_TRUSTSTORE);
        assertThat(SHELL.capture(HostCommand.of("nft", "list", "tables")).stdout()).doesNotContain("sallyport_" + id);
        try (var left = Files.list(Path.of("/run/sallyport/trust"))) {
            assertThat(left.map(Path::toString)).as("trust files of the run").noneMatch(p -> calls.get(4).contains(p));
        }
    }

    /** A runner whose workload runs until something kills it; what it prints goes to {@code bytes}. */
    private VmRunner runsUntilKilled(RunMarkers markers, ByteArrayOutputStream bytes) throws Exception {
        return new VmRunner(spec(List.of("tail", "-f", "/dev/null")), SHELL, markers,
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
    }

    private CompletableFuture<Integer> runInBackground(VmRunner runner) {
        CompletableFuture<Integer> run = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                run.complete(runner.execute(listen -> banner(listen, "proxy")));
            } catch (Throwable e) {
                run.completeExceptionally(e);
            }
        });
        return run;
    }

    /** Waits until the workload container (not the probe) runs; returns the stand-in's pid file for it. */
    private Path awaitWorkload() {
        Path pid = dir.resolve("state/containers").resolve(network.networkName());
        Await.until("the workload container runs", Duration.ofSeconds(60), () -> Files.exists(pid));
        return pid;
    }

    /** CNI's isolation rules that name this test's bridge (IPv4). */
    private List<String> isolationRules() throws Exception {
        List<String> rules = new java.util.ArrayList<>();
        for (String chain : List.of("CNI-ISOLATION-STAGE-1", "CNI-ISOLATION-STAGE-2")) {
            CommandResult listed = SHELL.capture(HostCommand.tolerant("iptables", "-w", "-S", chain));
            listed.stdout().lines().filter(l -> l.contains(network.bridgeName())).forEach(rules::add);
        }
        return rules;
    }

    private void assertNothingLeft(RunMarkers markers) throws Exception {
        CommandResult tables = SHELL.capture(HostCommand.of("nft", "list", "tables"));
        assertThat(tables.stdout()).doesNotContain(network.tableName());
        assertThat(Files.exists(Path.of("/sys/class/net", network.bridgeName()))).isFalse();
        assertThat(SHELL.capture(HostCommand.of("ip", "netns", "list")).stdout()).doesNotContain("spf-");
        assertThat(markers.liveIds()).isEmpty();
        assertThat(isolationRules()).as("CNI's isolation rules for the bridge").isEmpty();
        assertThat(SandboxNetwork.IPAM_STATE.resolve(network.networkName())).as("host-local's leases").doesNotExist();
    }

    private void cleanupQuietly() throws Exception {
        try (var pids = Files.list(dir.resolve("state/containers"))) {
            for (Path pid : pids.toList()) {
                SHELL.capture(HostCommand.tolerant("kill", "-9", Files.readString(pid).strip()));
            }
        }
        for (HostCommand command : network.teardownCommands()) {
            SHELL.capture(command);
        }
        IsolationRules.remove(SHELL, network.bridgeName()::equals);
    }

    private static ServerSocket banner(InetSocketAddress listen, String text) throws Exception {
        ServerSocket server = new ServerSocket();
        server.bind(listen);
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try (Socket client = server.accept()) {
                    client.getOutputStream().write((text + "\n").getBytes(StandardCharsets.US_ASCII));
                } catch (Exception closed) {
                    return;
                }
            }
        });
        return server;
    }
}
