package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.Prerequisites;
import java.util.List;
import org.junit.jupiter.api.Test;

class SandboxNetworkTest {

    static final SandboxNetwork NETWORK = new SandboxNetwork("ab12cd34", Ipv4Subnet.parse("10.213.7.0/24"), 3128);

    @Test
    void bridgeNameFollowsNerdctlsRuleCheckedAgainstSha256sum() throws Exception {
        Prerequisites.require("sha256sum", Executables.find("sha256sum").isPresent(), "coreutils' sha256sum");
        String digest = NetLab.SHELL.capture(new HostCommand(List.of("sha256sum"), "sallyport-ab12cd34", false))
                .stdout().substring(0, 12);

        assertThat(NETWORK.bridgeName()).isEqualTo("br-" + digest).hasSize(15);
    }

    @Test
    void namesAndAddresses() {
        assertThat(NETWORK.networkName()).isEqualTo("sallyport-ab12cd34");
        assertThat(NETWORK.tableName()).isEqualTo("sallyport_ab12cd34");
        assertThat(NETWORK.gateway()).isEqualTo("10.213.7.1");
        assertThat(NETWORK.proxyUrl()).isEqualTo("http://10.213.7.1:3128");
    }

    @Test
    void hostCommandsAreExact() {
        String br = NETWORK.bridgeName();
        assertThat(NETWORK.bridgeCommands(true).stream().map(HostCommand::toShell)).containsExactly(
                "ip link add name " + br + " type bridge",
                "ip link set dev " + br + " alias sallyport-ab12cd34",
                "sysctl -q -w net.ipv6.conf." + br + ".disable_ipv6=1",
                "ip addr add 10.213.7.1/24 dev " + br,
                "ip link set dev " + br + " up");
        assertThat(NETWORK.firewallCommand().toShell())
                .isEqualTo("nft -f - <<'EOF'\n" + NETWORK.ruleset() + "EOF");
        assertThat(NETWORK.teardownCommands().stream().map(HostCommand::toShell)).containsExactly(
                "nft delete table inet sallyport_ab12cd34 || true",
                "ip link del dev " + br + " || true",
                "rm -rf --one-file-system /var/lib/cni/networks/sallyport-ab12cd34 || true");
    }

    @Test
    void aHostBootedWithoutIpv6GetsNoIpv6Sysctl() {
        String br = NETWORK.bridgeName();
        assertThat(NETWORK.bridgeCommands(false).stream().map(HostCommand::toShell)).containsExactly(
                "ip link add name " + br + " type bridge",
                "ip link set dev " + br + " alias sallyport-ab12cd34",
                "ip addr add 10.213.7.1/24 dev " + br,
                "ip link set dev " + br + " up");
        assertThat(NETWORK.bridgeCommands()).as("this host").hasSize(
                java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/sys/net/ipv6")) ? 5 : 4);
    }

    @Test
    void badIdsAndPortsAreRefused() {
        assertThatThrownBy(() -> new SandboxNetwork("AB;rm", NETWORK.subnet(), 3128))
                .hasMessage("id: 'AB;rm' (expected: 4..16 of [a-z0-9])");
        assertThatThrownBy(() -> new SandboxNetwork("abcd", NETWORK.subnet(), 70000))
                .hasMessage("proxyPort: 70000 (expected: 1..65533)");
    }

    @Test
    void shellQuotingOfPrintedCommands() {
        assertThat(HostCommand.of("echo", "a b", "it's", "").toShell()).isEqualTo("echo 'a b' 'it'\\''s' ''");
    }
}
