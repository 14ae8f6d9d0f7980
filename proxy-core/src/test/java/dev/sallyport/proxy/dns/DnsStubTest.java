package dev.sallyport.proxy.dns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The proxy's DNS stub asked by a real resolver client ({@code dig}, over UDP and TCP) on loopback: allowed names get
 * a synthetic address (the same one each time, mapped back to the name), other names NXDOMAIN, and the proxy's real
 * resolver is never asked, not even for a long random label under an allowed zone (the way data leaves through
 * DNS).
 */
class DnsStubTest {

    private static final MapResolver RESOLVER = new MapResolver();
    private static final RecordingListener EVENTS = new RecordingListener();
    private static SallyportProxy proxy;
    private static InetSocketAddress dns;
    private static java.nio.file.Path auditFile;

    @BeforeAll
    static void start() throws Exception {
        Prerequisites.require("dig", new java.io.File("/usr/bin/dig").canExecute(),
                "dig (Debian: apt-get install bind9-dnsutils; scripts/install-deps.sh)");
        auditFile = java.nio.file.Files.createTempDirectory("sallyport-dns-test").resolve("audit.jsonl");
        proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse("""
                audit: {path: AUDIT}
                rules:
                  - name: uploads
                    action: deny
                    hosts: [upload.allowed.test]
                  - name: allowed
                    hosts: [allowed.test, upload.allowed.test]
                  - name: zone
                    hosts: ["*.zone.test"]
                    ports: [8443]
                """.replace("AUDIT", auditFile.toString()), "dns.yaml")).withCa(dev.sallyport.ca.CertificateAuthority.ephemeral("DNS Test CA"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(RESOLVER).withListener(EVENTS).withDns(new HostPort("127.0.0.1", 0)));
        dns = proxy.dnsAddress().orElseThrow();
    }

    @AfterAll
    static void stop() throws java.io.IOException {
        if (proxy != null) {
            proxy.close();
        }
        if (auditFile != null) {
            java.nio.file.Files.deleteIfExists(auditFile);
            java.nio.file.Files.deleteIfExists(auditFile.getParent());
        }
    }

    private static ExternalProcess.Result dig(String... args) {
        List<String> command = new ArrayList<>(List.of("dig", "@" + dns.getAddress().getHostAddress(), "-p",
                Integer.toString(dns.getPort()), "+time=5", "+tries=1"));
        command.addAll(List.of(args));
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), command, null);
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        return r;
    }

    private static ProxyEvent.DnsAnswered answered(String name, String type) {
        return Await.value("a dns record for " + name + " " + type, Duration.ofSeconds(10), () -> EVENTS.events.stream()
                .filter(e -> e instanceof ProxyEvent.DnsAnswered d && name.equals(d.name()) && type.equals(d.type()))
                .map(ProxyEvent.DnsAnswered.class::cast).findFirst().orElse(null));
    }

    @ParameterizedTest
    @ValueSource(strings = {"+notcp", "+tcp"})
    void anAllowedNameGetsItsSyntheticAddressOverUdpAndTcp(String transport) throws Exception {
        String first = dig(transport, "+short", "allowed.test", "A").stdout().strip();
        String again = dig(transport, "+short", "ALLOWED.test.", "A").stdout().strip();
        assertThat(first).startsWith("198.1").isEqualTo(again);
        InetAddress address = InetAddress.getByName(first);
        assertThat(SyntheticAddresses.isSynthetic(address)).isTrue();
        String v6 = dig(transport, "+short", "allowed.test", "AAAA").stdout().strip();
        assertThat(v6).startsWith("fd5a:11b0:7f00:53::");
        assertThat(RESOLVER.calls.get()).as("the real resolver was asked").isZero();
        ProxyEvent.DnsAnswered record = answered("allowed.test", "A");
        assertThat(record.answer()).isEqualTo(first);
        assertThat(record.decision()).isEqualTo("allow");
        assertThat(record.rule()).isEqualTo("allowed");
    }

    @Test
    void theTtlIsShortAndTheAnswerAuthoritative() {
        String out = dig("+noall", "+answer", "+comments", "allowed.test", "A").stdout();
        assertThat(out).contains("status: NOERROR").contains(" aa ")
                .containsPattern("allowed\\.test\\.\\s+" + DnsStub.TTL_SECONDS + "\\s+IN\\s+A\\s+198\\.1[89]\\.");
    }

    @ParameterizedTest
    @ValueSource(strings = {"denied.test", "upload.allowed.test", "zone.test", "allowed.test.evil.test",
        "evilallowed.test", "10.0.0.1"})
    void aNameNoRuleCanAllowIsNxdomainAndNeverResolved(String name) throws Exception {
        for (String type : List.of("A", "AAAA", "TXT", "MX")) {
            String out = dig("+noall", "+comments", "+answer", name, type).stdout();
            assertThat(out).as(name + " " + type).contains("status: NXDOMAIN").contains("ANSWER: 0");
        }
        assertThat(RESOLVER.calls.get()).isZero();
        ProxyEvent.DnsAnswered record = answered(name, "A");
        assertThat(record.answer()).isEqualTo("NXDOMAIN");
        assertThat(record.decision()).isEqualTo("deny");
        assertThat(record.reason()).isIn("no_matching_rule", "denied_by_rule", "invalid_host");
        proxy.flushAudit();
        assertThat(java.nio.file.Files.readAllLines(auditFile)).as("the audit log")
                .anyMatch(l -> l.contains("\"event\":\"dns\"") && l.contains("\"host\":\"" + name + "\"")
                        && l.contains("\"qtype\":\"A\"") && l.contains("\"answer\":\"NXDOMAIN\"")
                        && l.contains("\"decision\":\"deny\""));
    }

    @Test
    void otherTypesOfAnAllowedNameAreEmpty() {
        for (String type : List.of("TXT", "MX", "SRV", "CNAME", "ANY")) {
            String out = dig("+noall", "+comments", "+answer", "allowed.test", type).stdout();
            assertThat(out).as(type).contains("status: NOERROR").contains("ANSWER: 0");
        }
    }

    @Test
    void aLongRandomLabelUnderAnAllowedZoneReachesNothingOutside() throws Exception {
        Random random = new Random(16);
        StringBuilder label = new StringBuilder();
        for (int i = 0; i < 63; i++) {
            label.append((char) ('a' + random.nextInt(26)));
        }
        String name = label + "." + label + "." + label + ".zone.test";
        String address = dig("+short", name, "A").stdout().strip();
        assertThat(SyntheticAddresses.isSynthetic(InetAddress.getByName(address))).isTrue();
        assertThat(proxy.dnsAddress()).isPresent();
        assertThat(RESOLVER.calls.get()).as("the real resolver was asked").isZero();
        assertThat(answered(name, "A").rule()).isEqualTo("zone");
    }

    @Test
    void garbageGetsNoAnswerAndTheStubKeepsAnswering() throws Exception {
        try (java.net.DatagramSocket s = new java.net.DatagramSocket()) {
            byte[] junk = {1, 2, 3, 4, 5};
            s.send(new java.net.DatagramPacket(junk, junk.length, dns));
        }
        assertThat(dig("+short", "allowed.test", "A").stdout().strip()).startsWith("198.1");
    }
}
