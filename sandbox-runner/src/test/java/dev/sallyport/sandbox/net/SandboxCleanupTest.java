package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sallyport cleanup} for real: leftovers of a "crashed" run go, a live run's network stays. */
class SandboxCleanupTest {

    static final String CHAIN = "CNI-ISOLATION-STAGE-1";

    @TempDir
    Path markerDir;

    @BeforeAll
    static void requirements() throws Exception {
        NetLab.requireRootWithNetworkTools();
    }

    @Test
    void removesLeftoversOfDeadRunsAndKeepsLiveOnes(@TempDir Path ipam) throws Exception {
        List<Ipv4Subnet> subnets = HostEnforcementTest.freeTestSubnets(2);
        String base = Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        SandboxNetwork crashed = new SandboxNetwork("c" + base, subnets.get(0), 3128);
        SandboxNetwork live = new SandboxNetwork("l" + base, subnets.get(1), 3128);
        String goneBridge = SandboxNetwork.bridgeNameFor("sallyport-g" + base);
        RunMarkers markers = new RunMarkers(markerDir);
        try (NetLab lab = new NetLab()) {
            for (SandboxNetwork network : List.of(crashed, live)) {
                network.teardownCommands().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
                for (HostCommand command : network.bridgeCommands()) {
                    lab.run(command);
                }
                lab.run(network.firewallCommand());
                Files.createDirectories(ipam.resolve(network.networkName()));
            }
            for (String bridge : List.of(goneBridge, live.bridgeName())) {
                isolationRule(lab, bridge);
            }
            markers.mark(live.id());
            Files.writeString(markerDir.resolve(crashed.id()), "2147483646");  // a pid that is not running
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();

            List<HostCommand> removed = new SandboxCleanup(NetLab.SHELL, markers, Path.of("/sys/class/net"), ipam, ipam,
                    null).run(new PrintStream(bytes, true, StandardCharsets.UTF_8));

            assertThat(removed).contains(
                    HostCommand.tolerant("nft", "delete", "table", "inet", crashed.tableName()),
                    HostCommand.tolerant("ip", "link", "del", "dev", crashed.bridgeName()));
            assertThat(removed.stream().map(HostCommand::toShell)).noneMatch(line -> line.contains(live.id())
                    || line.contains(live.bridgeName()));
            String tables = NetLab.SHELL.capture(HostCommand.of("nft", "list", "tables")).stdout();
            assertThat(tables).doesNotContain(crashed.tableName()).contains(live.tableName());
            assertThat(Files.exists(Path.of("/sys/class/net", crashed.bridgeName()))).isFalse();
            assertThat(Files.exists(Path.of("/sys/class/net", live.bridgeName()))).isTrue();
            assertThat(ipam.resolve(crashed.networkName())).doesNotExist();
            assertThat(ipam.resolve(live.networkName())).isDirectory();
            String rules = NetLab.SHELL.capture(HostCommand.of("iptables", "-w", "-S", CHAIN)).stdout();
            assertThat(rules).as("the rule of a bridge that is gone").doesNotContain(goneBridge)
                    .as("the rule of a live sandbox's bridge").contains(live.bridgeName());
            assertThat(bytes.toString(StandardCharsets.UTF_8))
                    .contains("removed: nft delete table inet " + crashed.tableName());
        }
    }

    @Test
    void aDeadRunsContainerThatWillNotGoKeepsItsTableAndBridge(@TempDir Path ipam, @TempDir Path bin)
            throws Exception {
        List<Ipv4Subnet> subnets = HostEnforcementTest.freeTestSubnets(1);
        SandboxNetwork crashed = new SandboxNetwork("k" + Integer.toHexString(ThreadLocalRandom.current()
                .nextInt(1 << 24)), subnets.get(0), 3128);
        // A nerdctl whose containerd lost track of the VM: it lists the container, and rm -f fails.
        Path nerdctl = Files.writeString(bin.resolve("nerdctl"), """
                #!/bin/sh
                case "$1 $2" in
                  "ps -a") echo NAME;;
                  "rm -f") echo 'cannot kill: task not found' >&2; exit 1;;
                  "network ls") echo NAME;;
                esac
                """.replace("NAME", crashed.networkName()));
        Files.setPosixFilePermissions(nerdctl, PosixFilePermissions.fromString("rwx------"));
        try (NetLab lab = new NetLab()) {
            crashed.teardownCommands().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
            for (HostCommand command : crashed.bridgeCommands()) {
                lab.run(command);
            }
            lab.run(crashed.firewallCommand());
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();

            new SandboxCleanup(NetLab.SHELL, new RunMarkers(markerDir), Path.of("/sys/class/net"), ipam, ipam,
                    nerdctl.toString()).run(new PrintStream(bytes, true, StandardCharsets.UTF_8));

            assertThat(NetLab.SHELL.capture(HostCommand.of("nft", "list", "tables")).stdout())
                    .contains(crashed.tableName());
            assertThat(Files.exists(Path.of("/sys/class/net", crashed.bridgeName()))).isTrue();
            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("kept: the network, bridge and table of "
                    + crashed.networkName() + ", whose container is still there").doesNotContain("removed: nft");
        }
    }

    /**
     * A run killed while it rewrote its network's conflist leaves the temporary file beside it: a dead run's goes, a
     * live run's stays, and so do the conflists themselves (nerdctl's to remove with the network).
     */
    @Test
    void aDeadRunsTemporaryConflistGoesAndALiveRunsStays(@TempDir Path ipam, @TempDir Path cni) throws Exception {
        RunMarkers markers = new RunMarkers(markerDir);
        markers.mark("live1");
        Files.writeString(markerDir.resolve("dead1"), "2147483646");   // a pid that is not running
        Path dead = Files.writeString(cni.resolve(".nerdctl-sallyport-dead1.conflist.123" + CniConflist.TEMP_SUFFIX),
                "{}");
        Path live = Files.writeString(cni.resolve(".nerdctl-sallyport-live1.conflist.456" + CniConflist.TEMP_SUFFIX),
                "{}");
        Path conflist = Files.writeString(cni.resolve("nerdctl-sallyport-dead1.conflist"), "{}");
        Path other = Files.writeString(cni.resolve(".nerdctl-other.conflist.789" + CniConflist.TEMP_SUFFIX), "{}");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        new SandboxCleanup(NetLab.SHELL, markers, Path.of("/sys/class/net"), ipam, cni, null)
                .run(new PrintStream(bytes, true, StandardCharsets.UTF_8));

        assertThat(dead).doesNotExist();
        assertThat(live).exists();
        assertThat(conflist).exists();
        assertThat(other).exists();
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("removed: rm -f " + dead);
    }

    private static void isolationRule(NetLab lab, String bridge) throws Exception {
        NetLab.SHELL.capture(HostCommand.tolerant("iptables", "-w", "-N", CHAIN));
        lab.run("iptables", "-w", "-I", CHAIN, "-i", bridge, "!", "-o", bridge, "-m", "comment", "--comment",
                "test rule (ingressPolicy: same-bridge)", "-j", "RETURN");
        lab.onClose("iptables", "-w", "-D", CHAIN, "-i", bridge, "!", "-o", bridge, "-m", "comment", "--comment",
                "test rule (ingressPolicy: same-bridge)", "-j", "RETURN");
    }

    @Test
    void probeContainersOfLiveRunsAreNotLeftovers() {
        assertThat(SandboxCleanup.leftover("sallyport-ab12-probe", "sallyport-", java.util.Set.of("ab12"))).isFalse();
        assertThat(SandboxCleanup.leftover("sallyport-ab12-probe", "sallyport-", java.util.Set.of())).isTrue();
        assertThat(SandboxCleanup.leftover("sallyport_ab12", "sallyport_", java.util.Set.of("ab12"))).isFalse();
        assertThat(SandboxCleanup.leftover("other-ab12", "sallyport-", java.util.Set.of())).isFalse();
    }

    @Test
    void iptablesRulesAreReadBackWordForWordAndOnlyThoseNamingTheBridgeAreDeleted() {
        String rule = "-A CNI-ISOLATION-STAGE-1 -i br-0123456789ab ! -o br-0123456789ab -m comment --comment "
                + "\"CNI firewall plugin rules (ingressPolicy: same-bridge)\" -j CNI-ISOLATION-STAGE-2";

        assertThat(IsolationRules.deletion("iptables", CHAIN, rule, "br-0123456789ab"::equals).orElseThrow().argv())
                .containsExactly("iptables", "-w", "-t", "filter", "-D", CHAIN, "-i", "br-0123456789ab", "!", "-o",
                        "br-0123456789ab", "-m", "comment", "--comment",
                        "CNI firewall plugin rules (ingressPolicy: same-bridge)", "-j", "CNI-ISOLATION-STAGE-2");
        assertThat(IsolationRules.deletion("iptables", CHAIN, rule, "br-ffffffffffff"::equals)).isEmpty();
        assertThat(IsolationRules.deletion("iptables", CHAIN, "-N " + CHAIN, b -> true)).isEmpty();
        assertThat(IsolationRules.words("a \"b \\\" c\" d")).containsExactly("a", "b \" c", "d");
    }

    @Test
    void parsesNftTableListing() {
        assertThat(SandboxCleanup.parseTables("table ip nat\ntable inet sallyport_ab12\ntable inet filter\n"))
                .containsExactly("sallyport_ab12", "filter");
    }
}
