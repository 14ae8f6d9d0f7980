package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code network.deny: default} against the IANA special-purpose registries, the cloud metadata and
 * host-agent addresses, and every IPv6 spelling that carries an IPv4 address (regression: 192.0.0.192,
 * 168.63.129.16 and {@code ::ffff:0:a00:5} were allowed).
 */
class DefaultDenyTest {

    private static final PolicyEngine DEFAULT = PolicyEngine.compile(Policy.defaults());

    static IpAddress ip(String s) {
        return IpAddress.parseStrict(s).orElseThrow(() -> new IllegalArgumentException(s));
    }

    static boolean denied(String address) {
        return DEFAULT.onDial("x.example.com", 443, ip(address)).reason().equals(Reasons.PRIVATE_ADDRESS);
    }

    /** First, last and a middle address of every IPv4 block that is not globally reachable, and metadata. */
    static final List<String> DENIED_V4 = List.of(
            "0.0.0.0", "0.255.255.255", "10.0.0.0", "10.255.255.255", "100.64.0.0", "100.127.255.255",
            "127.0.0.1", "127.255.255.255", "169.254.0.0", "169.254.255.255", "172.16.0.0", "172.31.255.255",
            "192.0.0.0", "192.0.0.8", "192.0.0.9", "192.0.0.170", "192.0.0.171", "192.0.0.255",
            "192.0.2.0", "192.0.2.255", "192.88.99.1", "192.168.0.0", "192.168.255.255", "198.18.0.0",
            "198.19.255.255", "198.51.100.0", "198.51.100.255", "203.0.113.0", "203.0.113.255", "224.0.0.1",
            "239.255.255.255", "240.0.0.0", "255.255.255.255",
            // metadata and host agents
            "169.254.169.254", "169.254.170.2", "169.254.170.23", "169.254.169.253", "169.254.169.123",
            "169.254.0.23", "169.254.42.42", "169.254.20.10", "100.100.100.200", "100.100.2.136",
            "192.0.0.192", "168.63.129.16");

    static final List<String> DENIED_V6 = List.of(
            "::", "::1", "::2", "::a00:5", "::ffff:0:a00:5", "::ffff:0:808:808", "0:0:0:1::", "1::", "ff::1",
            "64::1", "64:ff9a::1", "64:ff9b:1::8.8.8.8", "64:ff9b:1:ffff::1", "64:ff9c::1", "65::1",
            "100::", "100::ffff:ffff:ffff:ffff", "100:0:0:1::1", "1ff:ffff::1", "200::1", "fff:ffff::1",
            "2001::", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "2001:1::1", "2001:1::3", "2001:2::1",
            "2001:3::1", "2001:4:112::1", "2001:10::1", "2001:1f::1", "2001:20::1", "2001:2f:ffff::1",
            "2001:30::1", "2001:1ff:ffff::1", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            "3fff::1", "3fff:fff:ffff::1", "4000::1", "5f00::1", "5f00:ffff::1", "7fff::1", "8000::1",
            "bfff::1", "c000::1", "e000::1", "f000::1", "f800::1", "fbff::1", "fc00::1", "fd00:ec2::254",
            "fd00:ec2::253", "fd00:ec2::123", "fd00:ec2::23", "fd20:ce::254", "fe00::1", "fe80::a9fe:a9fe",
            "febf::1", "fec0::1", "feff::1", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

    @ParameterizedTest
    @MethodSource("deniedAddresses")
    void everyNotGloballyReachableBlockAndMetadataAddressIsDenied(String address) {
        assertThat(denied(address)).as(address).isTrue();
    }

    static Stream<String> deniedAddresses() {
        return Stream.concat(DENIED_V4.stream(), DENIED_V6.stream());
    }

    /** Every IPv6 spelling of a denied IPv4 address is denied: mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP. */
    @ParameterizedTest
    @MethodSource("embeddings")
    void everyIpv6FormOfADeniedIpv4AddressIsDenied(String v6, String v4) {
        assertThat(DefaultDeny.embeddedIpv4(ip(v6))).as(v6).contains(ip(v4));
        assertThat(denied(v6)).as(v6 + " embeds " + v4).isTrue();
    }

    static Stream<Arguments> embeddings() {
        List<Arguments> out = new ArrayList<>();
        for (String v4 : DENIED_V4) {
            for (String v6 : spellings(ip(v4).bytes())) {
                out.add(Arguments.of(v6, v4));
            }
        }
        return out.stream();
    }

    /** The IPv6 spellings of one IPv4 address, each as canonical text. */
    static List<String> spellings(byte[] v4) {
        int hi = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
        int lo = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
        String h = Integer.toHexString(hi);
        String l = Integer.toHexString(lo);
        String nh = Integer.toHexString(~hi & 0xffff);
        String nl = Integer.toHexString(~lo & 0xffff);
        // RFC 6052 /48: octets 1-2 in bits 48..63, then the u octet (zero), then octets 3-4 in bits 72..87
        String third = Integer.toHexString(v4[2] & 0xff);
        String fourth = Integer.toHexString((v4[3] & 0xff) << 8);
        return Stream.of("::ffff:" + h + ":" + l, "::" + h + ":" + l, "::ffff:0:" + h + ":" + l,
                "64:ff9b::" + h + ":" + l, "64:ff9b:1::" + h + ":" + l,
                "64:ff9b:1:" + h + ":" + third + ":" + fourth + "::",
                "2002:" + h + ":" + l + "::1", "2001:0:" + h + ":" + l + "::1", "2001:0:4136:e378:8000:63bf:" + nh
                        + ":" + nl, "2a00:1450:4001:82b:0:5efe:" + h + ":" + l,
                "2a00:1450:4001:82b:200:5efe:" + h + ":" + l, "2a00:1450:4001:82b:300:5efe:" + h + ":" + l)
                .map(s -> ip(s).toString()).toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // just outside each new IPv4 block, and the blocks the registry marks globally reachable
        "191.255.255.255", "192.0.1.0", "192.0.3.0", "192.88.98.255", "192.88.100.0", "198.17.255.255",
        "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0", "168.63.129.15",
        "168.63.129.17", "192.31.196.1", "192.52.193.1", "192.175.48.1", "8.8.8.8",
        // public IPv6, and the IPv4 spellings a dual-stack host or a DNS64 resolver produces for public IPv4
        "2000::1", "2001:200::1", "2001:db7:ffff::1", "2001:db9::1", "2606:4700::1111", "2620:4f:8000::1",
        "3ffe:ffff::1", "3fff:1000::1", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
        "2a00:1450:4001:82b:200:5efe:808:808",
    })
    void publicAddressesAndPublicEmbeddingsStayAllowed(String address) {
        assertThat(denied(address)).as(address).isFalse();
        assertThat(DEFAULT.onDial("x.example.com", 443, ip(address)).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void allowPrivateOpensExactlyTheNamedNewRanges() throws PolicyException {
        PolicyEngine e = PolicyEngine.compile(PolicyLoader.parse("""
                network:
                  allow_private: ["192.0.0.192:80", "168.63.129.16:80", "[2001:db8::/32]:443",
                                  "[::ffff:0:a00:5]:443", "wireserver.corp.example:32526"]
                """, "t.yaml"));
        assertThat(e.onDial("x", 80, ip("192.0.0.192")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 80, ip("::ffff:192.0.0.192")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 81, ip("192.0.0.192")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("x", 80, ip("192.0.0.193")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("x", 80, ip("168.63.129.16")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 443, ip("2001:db8::1")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 443, ip("::ffff:0:a00:5")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("x", 443, ip("::ffff:0:a00:6")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
        assertThat(e.onDial("wireserver.corp.example", 32526, ip("168.63.129.16")).reason())
                .isEqualTo(Reasons.ALLOWED_PRIVATE);
        assertThat(e.onDial("other.corp.example", 32526, ip("168.63.129.16")).reason())
                .isEqualTo(Reasons.PRIVATE_ADDRESS);
    }

    @Test
    void anIpv4ExceptionCoversItsMappedSpellingOnlyNotTheOtherEmbeddings() throws PolicyException {
        PolicyEngine e = PolicyEngine.compile(PolicyLoader.parse(
                "network: {allow_private: [\"10.0.0.0/8:443\"]}", "t.yaml"));
        assertThat(e.onDial("x", 443, ip("::ffff:10.0.0.5")).reason()).isEqualTo(Reasons.ALLOWED_PRIVATE);
        for (String v6 : List.of("::ffff:0:a00:5", "64:ff9b::a00:5", "2002:a00:5::1", "2a00:1450:4001:82b::5efe:a00:5")) {
            assertThat(e.onDial("x", 443, ip(v6)).reason()).as(v6).isEqualTo(Reasons.PRIVATE_ADDRESS);
        }
        // a 6to4 address whose interface id happens to read ::ffff:a.b.c.d is not a mapped address
        assertThat(e.onDial("x", 443, ip("2002:a00:1::ffff:a00:1")).reason()).isEqualTo(Reasons.PRIVATE_ADDRESS);
    }

    @Test
    void reservedIpv6SpaceIsTheComplementOfTheTwoIpv4Carriers() {
        DefaultDeny.Entry row = DefaultDeny.ENTRIES.stream().filter(r -> r.text().startsWith("::/8")).findFirst()
                .orElseThrow();
        assertThat(row.networks()).hasSize(173);
        Random random = new Random(11);
        Cidr slash8 = Cidr.parse("::/8");
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[16];
            random.nextBytes(b);
            b[0] = 0;
            switch (i % 4) {
                case 0 -> { // inside or next to ::ffff:0:0/96
                    Arrays.fill(b, 1, 10, (byte) 0);
                    b[10] = (byte) (random.nextBoolean() ? 0xff : b[10]);
                    b[11] = (byte) (random.nextBoolean() ? 0xff : b[11]);
                }
                case 1 -> { // inside or next to 64:ff9b::/96
                    b[1] = 0x64;
                    b[2] = (byte) 0xff;
                    b[3] = (byte) (random.nextBoolean() ? 0x9b : b[3]);
                    if (random.nextBoolean()) {
                        Arrays.fill(b, 4, 12, (byte) 0);
                    }
                }
                default -> { }
            }
            IpAddress a = IpAddress.ofBytes(b);
            boolean hole = DefaultDeny.MAPPED.contains(a) || DefaultDeny.NAT64.contains(a);
            boolean covered = row.networks().stream().anyMatch(c -> c.contains(a));
            assertThat(covered).as(a.toString()).isEqualTo(slash8.contains(a) && !hole);
        }
    }

    @Test
    void cidrWithoutCoversExactlyTheRest() {
        assertThat(Cidr.parse("10.0.0.0/8").without(List.of(Cidr.parse("10.128.0.0/9"))))
                .containsExactly(Cidr.parse("10.0.0.0/9"));
        assertThat(Cidr.parse("10.0.0.0/8").without(List.of(Cidr.parse("10.0.0.0/7")))).isEmpty();
        assertThat(Cidr.parse("10.0.0.0/8").without(List.of(Cidr.parse("11.0.0.0/8"), Cidr.parse("::/0"))))
                .containsExactly(Cidr.parse("10.0.0.0/8"));
        assertThat(Cidr.parse("10.0.0.0/8").without(List.of(Cidr.parse("10.1.2.3")))).hasSize(24)
                .noneMatch(c -> c.contains(ip("10.1.2.3")))
                .anyMatch(c -> c.contains(ip("10.1.2.2"))).anyMatch(c -> c.contains(ip("10.255.255.255")));
    }

    /** The policy README's table is the list: same rows, same order, same reasons. */
    @Test
    void theReadmeTableIsTheCodeList() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("<!-- default-deny:start -->");
        int end = readme.indexOf("<!-- default-deny:end -->");
        assertThat(start).as("README markers").isPositive();
        List<String> rows = readme.substring(start, end).lines().filter(l -> l.startsWith("| `")).toList();
        List<String> expected = DefaultDeny.ENTRIES.stream()
                .map(e -> "| `" + e.text().replace(", ", "`, `") + "` | " + e.why() + " |").toList();
        assertThat(rows).containsExactlyElementsOf(expected);
    }
}
