package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.testing.Prerequisites;
import org.junit.jupiter.api.Test;

class NftRulesetTest {

    static final SandboxNetwork NETWORK = new SandboxNetwork("ab12cd34", Ipv4Subnet.parse("10.213.7.0/24"), 3128);

    @Test
    void tableIsExact() {
        String bridge = NETWORK.bridgeName();
        assertThat(NETWORK.ruleset()).isEqualTo("""
                table inet sallyport_ab12cd34 {}
                delete table inet sallyport_ab12cd34
                table inet sallyport_ab12cd34 {
                \tset spoofed {
                \t\ttype ipv4_addr
                \t\tsize 256
                \t\tflags dynamic
                \t}
                \tchain source {
                \t\ttype filter hook prerouting priority -300; policy accept;
                \t\tiifname "BR" ip saddr != 10.213.7.2 add @spoofed { ip saddr }
                \t\tiifname "BR" ip saddr != 10.213.7.2 counter drop
                \t\tiifname != "BR" ip saddr 10.213.7.2 drop
                \t}
                \tchain prerouting {
                \t\ttype nat hook prerouting priority -100; policy accept;
                \t\tiifname "BR" ip daddr 10.213.7.1 meta l4proto { tcp, udp } th dport 53 dnat ip to 10.213.7.1:3130
                \t\tiifname "BR" ip daddr 198.18.0.0/15 meta l4proto tcp dnat ip to 10.213.7.1:3129
                \t}
                \tchain forward {
                \t\ttype filter hook forward priority -100; policy accept;
                \t\tiifname "BR" reject with icmpx type admin-prohibited
                \t\toifname "BR" drop
                \t}
                \tchain input {
                \t\ttype filter hook input priority -100; policy accept;
                \t\tiifname "BR" jump from_sandbox
                \t\tip daddr 10.213.7.1 iifname != "lo" drop
                \t}
                \tchain from_sandbox {
                \t\tmeta nfproto ipv6 drop
                \t\tip daddr 10.213.7.1 tcp dport { 3128, 3129, 3130 } accept
                \t\tip daddr 10.213.7.1 udp dport 3130 accept
                \t\tmeta l4proto tcp reject with tcp reset
                \t\treject with icmpx type admin-prohibited
                \t}
                }
                """.replace("BR", bridge));
    }

    @Test
    void capturingLiteralAddressesDnatsTcpToEveryAddressButTheGatewayAndChangesNothingElse() {
        String literal = NETWORK.withLiterals(LiteralAddresses.CAPTURE).ruleset();
        assertThat(literal).isEqualTo(NETWORK.ruleset().replace(
                "ip daddr 198.18.0.0/15 meta l4proto tcp dnat", "ip daddr != 10.213.7.1 meta l4proto tcp dnat"));
        assertThat(literal).contains("iifname \"" + NETWORK.bridgeName()
                + "\" ip daddr != 10.213.7.1 meta l4proto tcp dnat ip to 10.213.7.1:3129\n");
    }

    @Test
    void withoutCaptureNothingIsTranslatedAndTheBridgeReachesOnlyTheProxyPort() {
        String bridge = NETWORK.bridgeName();
        assertThat(NETWORK.withCapture(false).ruleset()).isEqualTo("""
                table inet sallyport_ab12cd34 {}
                delete table inet sallyport_ab12cd34
                table inet sallyport_ab12cd34 {
                \tset spoofed {
                \t\ttype ipv4_addr
                \t\tsize 256
                \t\tflags dynamic
                \t}
                \tchain source {
                \t\ttype filter hook prerouting priority -300; policy accept;
                \t\tiifname "BR" ip saddr != 10.213.7.2 add @spoofed { ip saddr }
                \t\tiifname "BR" ip saddr != 10.213.7.2 counter drop
                \t\tiifname != "BR" ip saddr 10.213.7.2 drop
                \t}
                \tchain forward {
                \t\ttype filter hook forward priority -100; policy accept;
                \t\tiifname "BR" reject with icmpx type admin-prohibited
                \t\toifname "BR" drop
                \t}
                \tchain input {
                \t\ttype filter hook input priority -100; policy accept;
                \t\tiifname "BR" jump from_sandbox
                \t\tip daddr 10.213.7.1 iifname != "lo" drop
                \t}
                \tchain from_sandbox {
                \t\tmeta nfproto ipv6 drop
                \t\tip daddr 10.213.7.1 tcp dport 3128 accept
                \t\tmeta l4proto tcp reject with tcp reset
                \t\treject with icmpx type admin-prohibited
                \t}
                }
                """.replace("BR", bridge));
        assertThat(NETWORK.withLiterals(LiteralAddresses.CAPTURE).withCapture(false).ruleset())
                .as("literal addresses: nothing captured either").isEqualTo(NETWORK.withCapture(false).ruleset());
        assertThat(NETWORK.withCapture(false).guestRoutes()).as("no routes for the guest").isEmpty();
        assertThat(NETWORK.withLiterals(LiteralAddresses.CAPTURE).withCapture(false).guestRoutes()).isEmpty();
    }

    @Test
    void nftAcceptsTheScript() throws Exception {
        Prerequisites.requireRoot("nft -c needs root to check the syntax");
        Prerequisites.require("nft", Executables.find("nft").isPresent(), "nftables: apt-get install nftables");
        for (SandboxNetwork network : java.util.List.of(NETWORK, NETWORK.withLiterals(LiteralAddresses.CAPTURE),
                NETWORK.withCapture(false))) {
            CommandResult check = NetLab.SHELL.capture(
                    new HostCommand(java.util.List.of("nft", "-c", "-f", "-"), network.ruleset(), true));
            assertThat(check.exit()).as(check.stderr()).isZero();
        }
    }

    @Test
    void namesThatCouldBreakOutOfTheScriptAreRefused() {
        assertThatThrownBy(() -> NftRuleset.render("t", "br\" accept #", "10.0.0.1", "10.0.0.2", 1, 2, 3))
                .hasMessage("bridge: 'br\" accept #' (expected: letters, digits, '_', '.', '-')");
        assertThatThrownBy(() -> NftRuleset.render("t", "br0", "10.0.0.01", "10.0.0.2", 1, 2, 3))
                .hasMessage("address: '10.0.0.01' (expected: a dotted quad)");
        assertThatThrownBy(() -> NftRuleset.render("t", "br0", "10.0.0.1", "10.0.0.2", 0, 2, 3))
                .hasMessage("port: 0 (expected: 1..65535)");
    }
}
