package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.Ipv4Subnet;
import dev.sallyport.sandbox.net.RunMarkers;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VmRunnerDryRunTest {

    @TempDir
    Path markers;

    @Test
    void dryRunPrintsEveryCommandInOrderAndRunsNone() throws Exception {
        SandboxNetwork network = new SandboxNetwork("d7e5a1b2", Ipv4Subnet.parse("10.213.9.0/24"), 3128);
        NerdctlSpec spec = NerdctlSpec.of(network, VmRuntime.KATA, "debian:12", List.of("npm", "test"),
                Path.of("/home/ann/project"), new UserIds(1000, 1000), Path.of("/run/sallyport/bundle.pem"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        String br = network.bridgeName();

        int exit = new VmRunner(spec, new dev.sallyport.sandbox.net.DryRun(out), new RunMarkers(markers), out)
                .execute(listen -> {
                    throw new AssertionError("a dry run must not start the proxy");
                });

        List<String> expected = new ArrayList<>();
        expected.add(shell(NerdctlCommand.imageInspect(spec)) + " || true");
        expected.add(shell(NerdctlCommand.networkCreate("nerdctl", network)));
        expected.add(shell(NerdctlCommand.networkInspect("nerdctl", network)));
        expected.add("# add IPAM routes 198.18.0.0/15 via 10.213.9.1 to the bridge plugin of the conflist that inspect "
                + "names (its File)");
        network.bridgeCommands().forEach(c -> expected.add(c.toShell()));
        expected.add(network.firewallCommand().toShell());
        expected.add("# start the proxy listening on 10.213.9.1:3128");
        expected.add(shell(NerdctlCommand.probe(spec)) + " || true");
        expected.add(shell(NerdctlCommand.build(spec)));
        expected.add(shell(NerdctlCommand.forceRemove("nerdctl", network)) + " || true");
        expected.add(shell(NerdctlCommand.listContainers("nerdctl", network)) + " || true");
        expected.add(shell(NerdctlCommand.networkRemove("nerdctl", network)) + " || true");
        network.teardownCommands().forEach(c -> expected.add(c.toShell()));
        for (String tool : List.of("iptables", "ip6tables")) {
            for (String chain : List.of("CNI-ISOLATION-STAGE-1", "CNI-ISOLATION-STAGE-2")) {
                expected.add(tool + " -w -t filter -S " + chain + " || true");
            }
        }
        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo(String.join("\n", expected) + "\n");
        assertThat(bytes.toString(StandardCharsets.UTF_8))
                .contains("nerdctl network create --driver bridge --internal --subnet 10.213.9.0/24")
                .contains("ip link add name " + br + " type bridge")
                .contains("nft -f - <<'EOF'\ntable inet sallyport_d7e5a1b2 {}")
                .contains("nerdctl run --rm -i --name sallyport-d7e5a1b2 ")
                .contains("nft delete table inet sallyport_d7e5a1b2 || true");
        assertThat(exit).isZero();
        assertThat(Files.exists(Path.of("/sys/class/net", br))).as("no bridge was created").isFalse();
        try (var files = Files.list(markers)) {
            assertThat(files).as("no run marker for a dry run").isEmpty();
        }
    }

    @Test
    void withLiteralAddressesCapturedTheDryRunShowsTheDefaultRouteViaTheGatewayToo() throws Exception {
        SandboxNetwork network = new SandboxNetwork("d7e5a1b3", Ipv4Subnet.parse("10.213.10.0/24"), 3128)
                .withLiterals(dev.sallyport.policy.LiteralAddresses.CAPTURE);
        NerdctlSpec spec = NerdctlSpec.of(network, VmRuntime.KATA, "debian:12", List.of("true"),
                Path.of("/home/ann/project"), new UserIds(1000, 1000), Path.of("/run/sallyport/bundle.pem"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

        new VmRunner(spec, new dev.sallyport.sandbox.net.DryRun(out), new RunMarkers(markers), out)
                .execute(listen -> () -> { });

        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("\n# add IPAM routes 198.18.0.0/15 via "
                + "10.213.10.1, 0.0.0.0/0 via 10.213.10.1 to the bridge plugin of the conflist that inspect names "
                + "(its File)\n");
    }

    @Test
    void withoutCaptureTheDryRunHasNoDnatAndNoIpamRoutes() throws Exception {
        SandboxNetwork network = new SandboxNetwork("d7e5a1b4", Ipv4Subnet.parse("10.213.11.0/24"), 3128)
                .withLiterals(dev.sallyport.policy.LiteralAddresses.CAPTURE).withCapture(false);
        NerdctlSpec spec = NerdctlSpec.of(network, VmRuntime.KATA, "debian:12", List.of("true"),
                Path.of("/home/ann/project"), new UserIds(1000, 1000), Path.of("/run/sallyport/bundle.pem"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

        new VmRunner(spec, new dev.sallyport.sandbox.net.DryRun(out), new RunMarkers(markers), out)
                .execute(listen -> {
                    throw new AssertionError("a dry run must not start the proxy");
                });

        String printed = bytes.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains(shell(NerdctlCommand.networkInspect("nerdctl", network)) + "\n",
                        network.firewallCommand().toShell() + "\n", "# start the proxy listening on 10.213.11.1:3128\n",
                        "\t\tip daddr 10.213.11.1 tcp dport 3128 accept\n")
                .doesNotContain("IPAM routes").doesNotContain("dnat").doesNotContain("chain prerouting")
                .doesNotContain("3129").doesNotContain("3130");
    }

    private static String shell(List<String> argv) {
        return new HostCommand(argv, null, false).toShell();
    }
}
