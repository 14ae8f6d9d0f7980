package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OnDialTest {

    private static final PolicyEngine DEFAULT = PolicyEngine.compile(Policy.defaults());

    private static IpAddress ip(String s) {
        return IpAddress.parseStrict(s).orElseThrow();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "127.0.0.1", "127.255.255.254", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "169.254.169.254", "169.254.0.1", "100.64.0.1", "100.100.100.200", "0.0.0.0", "0.1.2.3",
        "255.255.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
        "::", "::1", "fe80::1", "febf::1", "fec0::1", "fc00::1", "fd00:ec2::254", "ff02::1", "ff05::2",
        // IPv4-mapped and IPv4-compatible
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:0.0.0.0", "::127.0.0.1",
        "::10.0.0.1", "::0.0.0.2",
        // NAT64 well-known and local-use prefixes
        "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1", "64:ff9b:1::10.0.0.1",
        "64:ff9b:1:a9fe:a9:fe00::",
        // 6to4
        "2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:a00:1:1::1",
        // Teredo: client = NOT of last 32 bits; 169.254.169.254 -> 5601:5601, 127.0.0.1 -> 80ff:fffe
        "2001:0:4136:e378:8000:63bf:5601:5601", "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:a00:1::1",
    })
    void deniesPrivateAddressesAndTheirIpv6Embeddings(String address) {
        Decision d = DEFAULT.onDial("example.com", 443, ip(address));
        assertThat(d.verdict()).isEqualTo(Verdict.DENY);
        assertThat(d.reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "93.184.216.34", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
        "169.253.255.255", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
        "2a00:1450:4001:82b::200e", "2002:c01f:c401::1",
    })
    void allowsPublicAddressesIncludingPublicEmbeddings(String address) {
        Decision d = DEFAULT.onDial("example.com", 443, ip(address));
        assertThat(d.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(d.reason()).isEqualTo(Reasons.ADDRESS_ALLOWED);
    }

    @Test
    void allowPrivateIsANarrowExceptionByAddressOrHostAndPort() throws PolicyException {
        PolicyEngine e = PolicyEngine.compile(PolicyLoader.parse("""
                network:
                  deny: default
                  allow_private: ["10.20.0.0/16:5432", "git.corp.example:443", "[fd00::1]:443", "10.9.9.9:22"]
                """, "t.yaml"));
        assertThat(e.onDial("db", 5432, ip("10.20.1.1")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("db", 5433, ip("10.20.1.1")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("db", 5432, ip("10.21.1.1")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("db", 5432, ip("::ffff:10.20.1.1")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("GIT.corp.example.", 443, ip("10.1.1.1")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("git.corp.example", 22, ip("10.1.1.1")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("evil.example", 443, ip("10.1.1.1")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("x", 443, ip("fd00::1")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 443, ip("fd00::2")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("x", 22, ip("10.9.9.9")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 443, ip("169.254.169.254")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
    }

    @Test
    void customDenyListsCanExtendOrReplaceTheDefault() throws PolicyException {
        PolicyEngine extended = PolicyEngine.compile(PolicyLoader.parse(
                "network: {deny: [default, 203.0.113.0/24]}", "t.yaml"));
        assertThat(extended.onDial("x", 443, ip("203.0.113.9")).verdict()).isEqualTo(Verdict.DENY);
        assertThat(extended.onDial("x", 443, ip("::ffff:203.0.113.9")).verdict()).isEqualTo(Verdict.DENY);
        assertThat(extended.onDial("x", 443, ip("127.0.0.1")).verdict()).isEqualTo(Verdict.DENY);
        PolicyEngine replaced = PolicyEngine.compile(PolicyLoader.parse("network: {deny: [203.0.113.0/24]}", "t.yaml"));
        assertThat(replaced.onDial("x", 443, ip("127.0.0.1")).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(replaced.onDial("x", 443, ip("2002:cb00:7109::")).verdict()).isEqualTo(Verdict.DENY);
    }

    @Test
    void theProxysOwnAddressIsNeverDialedEvenWhenAllowedPrivately() throws PolicyException {
        PolicyEngine e = PolicyEngine.compile(PolicyLoader.parse("""
                proxy: {listen: "10.0.0.5:3128", admin: "[fd00::5]:9901"}
                network: {allow_private: ["10.0.0.0/8:3128", "[fd00::/8]:9901"]}
                """, "t.yaml"));
        assertThat(e.onDial("x", 3128, ip("10.0.0.5")).reason()).isEqualTo(Reasons.PROXY_ADDRESS);
        assertThat(e.onDial("x", 3128, ip("::ffff:10.0.0.5")).reason()).isEqualTo(Reasons.PROXY_ADDRESS);
        assertThat(e.onDial("x", 9901, ip("fd00::5")).reason()).isEqualTo(Reasons.PROXY_ADDRESS);
        assertThat(e.onDial("x", 3128, ip("10.0.0.6")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
    }
}
