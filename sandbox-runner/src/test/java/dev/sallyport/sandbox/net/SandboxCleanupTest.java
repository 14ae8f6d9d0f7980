package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sallyport cleanup} for real: leftovers of a "crashed" run go, a live run's network stays. */
class SandboxCleanupTest {

    @TempDir
    Path markerDir;

    @BeforeAll
    static void requirements() throws Exception {
        NetLab.requireRootWithNetworkTools();
    }

    @Test
    void removesLeftoversOfDeadRunsAndKeepsLiveOnes() throws Exception {
        List<Ipv4Subnet> subnets = HostEnforcementTest.freeTestSubnets(2);
        String base = Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        SandboxNetwork crashed = new SandboxNetwork("c" + base, subnets.get(0), 3128);
        SandboxNetwork live = new SandboxNetwork("l" + base, subnets.get(1), 3128);
        RunMarkers markers = new RunMarkers(markerDir);
        try (NetLab lab = new NetLab()) {
            for (SandboxNetwork network : List.of(crashed, live)) {
                network.teardownCommands().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
                for (HostCommand command : network.bridgeCommands()) {
                    lab.run(command);
                }
                lab.run(network.firewallCommand());
            }
            markers.mark(live.id());
            Files.writeString(markerDir.resolve(crashed.id()), "2147483646");  // a pid that is not running
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();

            List<HostCommand> removed = new SandboxCleanup(NetLab.SHELL, markers, Path.of("/sys/class/net"), false)
                    .run(new PrintStream(bytes, true, StandardCharsets.UTF_8));

            assertThat(removed).contains(
                    HostCommand.tolerant("nft", "delete", "table", "inet", crashed.tableName()),
                    HostCommand.tolerant("ip", "link", "del", "dev", crashed.bridgeName()));
            assertThat(removed.stream().map(HostCommand::toShell)).noneMatch(line -> line.contains(live.id())
                    || line.contains(live.bridgeName()));
            String tables = NetLab.SHELL.capture(HostCommand.of("nft", "list", "tables")).stdout();
            assertThat(tables).doesNotContain(crashed.tableName()).contains(live.tableName());
            assertThat(Files.exists(Path.of("/sys/class/net", crashed.bridgeName()))).isFalse();
            assertThat(Files.exists(Path.of("/sys/class/net", live.bridgeName()))).isTrue();
            assertThat(bytes.toString(StandardCharsets.UTF_8))
                    .contains("removed: nft delete table inet " + crashed.tableName());
        }
    }

    @Test
    void probeContainersOfLiveRunsAreNotLeftovers() {
        assertThat(SandboxCleanup.leftover("sallyport-ab12-probe", "sallyport-", java.util.Set.of("ab12"))).isFalse();
        assertThat(SandboxCleanup.leftover("sallyport-ab12-probe", "sallyport-", java.util.Set.of())).isTrue();
        assertThat(SandboxCleanup.leftover("sallyport_ab12", "sallyport_", java.util.Set.of("ab12"))).isFalse();
        assertThat(SandboxCleanup.leftover("other-ab12", "sallyport-", java.util.Set.of())).isFalse();
    }

    @Test
    void parsesNftTableListing() {
        assertThat(SandboxCleanup.parseTables("table ip nat\ntable inet sallyport_ab12\ntable inet filter\n"))
                .containsExactly("sallyport_ab12", "filter");
    }
}
