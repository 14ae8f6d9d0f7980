package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.sandbox.vm.VmSandbox;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The VM backend's transparent capture on the host, for real: as {@link HostEnforcementTest} does, the test builds
 * what nerdctl + CNI build for a guest (the runner's bridge, a namespace attached to it with a default route via the
 * gateway, its resolver pointed at the gateway as {@code nerdctl run --dns} does), loads the runner's own table and
 * starts the proxy the way a VM run does ({@link VmSandbox#proxyOn}). From the guest, with no proxy variable: DNS to
 * the gateway (UDP and TCP) is the proxy's stub (a synthetic address for the allowed name, NXDOMAIN for another),
 * {@code curl} reaches the allowed name through the transparent listener, and everything else is still refused or
 * dropped: another port of the gateway (a host service), the proxy's admin port, a LAN host, UDP, another resolver,
 * a synthetic address nobody was given. Addresses come from 10.231.0.0/16 and live only on interfaces this test
 * creates; the upstream is on the host's loopback.
 */
class HostCaptureTest {

    private static final String ALLOWED = "allowed.test";
    private static final int OTHER_PORT = 8080;
    private static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");

    @TempDir
    Path dir;

    @BeforeAll
    static void requirements() throws Exception {
        NetLab.requireRootWithNetworkTools();
        for (String tool : List.of("dig", "curl")) {
            Prerequisites.require(tool, Executables.find(tool).isPresent(), tool + " (scripts/install-deps.sh)");
        }
    }

    @Test
    void guestDnsAndTcpToSyntheticAddressesLandOnTheProxyAndNothingElseOpens() throws Exception {
        List<Ipv4Subnet> subnets = HostEnforcementTest.freeTestSubnets(2);
        String forwardBefore = Files.readString(IP_FORWARD).strip();
        String id = "t" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        SandboxNetwork sandbox = new SandboxNetwork(id, subnets.get(0), VmSandbox.PROXY_PORT);
        Ipv4Subnet lan = subnets.get(1);
        TestPki pki = TestPki.create();
        try (NetLab lab = new NetLab();
             HttpsSite site = HttpsSite.start(pki.issue(ALLOWED))
                     .route("/", exchange -> HttpsSite.respond(exchange, 200, "hello from " + ALLOWED + "\n"))) {
            String guest = guestAndLan(lab, sandbox, lan, forwardBefore,
                    "tcp|" + lan.host(2) + "|" + OTHER_PORT + "|lan-host");
            Path etc = Path.of("/etc/netns", guest);
            if (!Files.exists(etc.getParent())) {
                lab.onClose("rmdir", etc.getParent().toString());
            }
            lab.onClose("rm", "-rf", etc.toString());
            Files.createDirectories(etc);
            Files.writeString(etc.resolve("resolv.conf"), "nameserver " + sandbox.gateway() + "\n");

            Path audit = dir.resolve("audit.jsonl");
            CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Test CA");
            Path caPem = Files.write(dir.resolve("ca.pem"), CaExport.pem(ca, false));
            String policy = policy(audit, pki, "127.0.0.1:" + site.port(), """
                      - name: allowed
                        hosts: [%s]
                        ports: [%d]
                    """.formatted(ALLOWED, site.port()));
            ProxyOptions options = ProxyOptions.of(PolicyLoader.parse(policy, "policy.yaml")).withCa(ca)
                    .withAdmin(new HostPort("127.0.0.1", 0))
                    .withResolver(host -> host.equals(ALLOWED)
                            ? CompletableFuture.completedFuture(List.of(InetAddress.getLoopbackAddress()))
                            : CompletableFuture.failedFuture(new IllegalStateException("no such host " + host)));
            Map<String, String> targets = new LinkedHashMap<>();
            targets.put("host-service", "tcp|" + sandbox.gateway() + "|" + OTHER_PORT);
            targets.put("lan-host", "tcp|" + lan.host(2) + "|" + OTHER_PORT);
            assertThat(lab.probeFrom(guest, targets).results()).as("without the table both answer")
                    .containsEntry("host-service", "ok:host-service").containsEntry("lan-host", "ok:lan-host");

            lab.run(sandbox.firewallCommand());
            try (SallyportProxy proxy = SallyportProxy.start(VmSandbox.proxyOn(sandbox, options))) {
                String answer = inGuest(guest, "dig @" + sandbox.gateway() + " +short +time=5 +tries=1 " + ALLOWED)
                        .strip();
                assertThat(answer).as("a synthetic address, over UDP to the gateway's port 53").startsWith("198.1");
                assertThat(inGuest(guest, "dig @" + sandbox.gateway() + " +tcp +short +time=5 +tries=1 " + ALLOWED)
                        .strip()).as("over TCP").isEqualTo(answer);
                assertThat(inGuest(guest, "dig @" + sandbox.gateway() + " +time=5 +tries=1 denied.test"))
                        .contains("status: NXDOMAIN");
                String url = "https://" + ALLOWED + ":" + site.port() + "/hello";
                assertThat(inGuest(guest, "env -i curl -sS -m 20 --noproxy '*' --cacert " + caPem + " " + url
                        + "; echo curl=$?")).as("transparent TCP to the allowed name")
                        .isEqualTo("hello from " + ALLOWED + "\ncurl=0\n");
                assertThat(inGuest(guest, "curl -sS -m 20 -x http://" + sandbox.gateway() + ":"
                        + sandbox.proxyPort() + " --cacert " + caPem + " " + url + "; echo curl=$?"))
                        .as("the explicit listener, as before").isEqualTo("hello from " + ALLOWED + "\ncurl=0\n");

                targets.put("admin", "tcp|" + sandbox.gateway() + "|" + proxy.adminAddress().getPort());
                targets.put("udp", "udp|" + sandbox.gateway() + "|4000");
                targets.put("other-resolver", "udp|" + lan.host(2) + "|53");
                targets.put("unmapped-synthetic", "tcp|198.19.7.7|443");
                Map<String, String> closed = lab.probeFrom(guest, targets).results();
                for (String name : List.of("host-service", "admin")) {
                    assertThat(closed.get(name)).as(name + ": a TCP reset").isEqualTo("refused");
                }
                assertThat(closed.get("lan-host")).as("forwarding rejected").isEqualTo("unreachable");
                assertThat(closed.get("udp")).doesNotStartWith("ok");
                assertThat(closed.get("other-resolver")).doesNotStartWith("ok");
                assertThat(closed.get("unmapped-synthetic")).as("the proxy accepts and closes, unanswered")
                        .isIn("ok:", "error-104");
                proxy.flushAudit();
                String records = Files.readString(audit);
                assertThat(records).contains("\"answer\":\"NXDOMAIN\"")
                        .contains("\"reason\":\"unknown_synthetic_address\"");
                assertThat(records.lines().filter(l -> l.contains("\"path\":\"/hello\"")))
                        .anySatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""))
                        .anySatisfy(l -> assertThat(l).contains("\"arrival\":\"explicit\""));
            }
        }
    }

    /**
     * With {@code network.literal_addresses: capture} the table DNATs TCP to any address but the gateway's: from the
     * guest, {@code curl} to a LAN host's literal address that a {@code cidrs} rule allows is intercepted and served,
     * while another address of that network and the LAN host's other port ({@code network.deny}: 403 at the dial) and
     * an address no rule names (closed unanswered) are refused by the proxy and audited as transparent; the gateway's
     * other ports and the admin port are still reset by the table, UDP still goes nowhere.
     */
    @Test
    void withLiteralAddressesCapturedTcpToAnyAddressIsDecidedByTheProxy() throws Exception {
        List<Ipv4Subnet> subnets = HostEnforcementTest.freeTestSubnets(2);
        String forwardBefore = Files.readString(IP_FORWARD).strip();
        String id = "t" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        SandboxNetwork sandbox = new SandboxNetwork(id, subnets.get(0), VmSandbox.PROXY_PORT)
                .withLiterals(LiteralAddresses.CAPTURE);
        Ipv4Subnet lan = subnets.get(1);
        String server = lan.host(2);
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue(server);
        try (NetLab lab = new NetLab()) {
            String guest = guestAndLan(lab, sandbox, lan, forwardBefore,
                    "tcp|" + server + "|" + OTHER_PORT + "|lan-host",
                    "tls|" + server + "|443|hello from " + server + "|" + leaf.writeCertPem(dir) + "|"
                            + leaf.writeKeyPem(dir));

            Path audit = dir.resolve("audit.jsonl");
            CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Test CA");
            Path caPem = Files.write(dir.resolve("ca.pem"), CaExport.pem(ca, false));
            String policy = policy(audit, pki, server + ":443", """
                      - name: lan
                        cidrs: [%s]
                        ports: [443, %d]
                    """.formatted(lan, OTHER_PORT)).replace("rules:", "  literal_addresses: capture\nrules:");
            ProxyOptions options = ProxyOptions.of(PolicyLoader.parse(policy, "policy.yaml")).withCa(ca)
                    .withAdmin(new HostPort("127.0.0.1", 0));
            lab.run(sandbox.firewallCommand());
            try (SallyportProxy proxy = SallyportProxy.start(VmSandbox.proxyOn(sandbox, options))) {
                assertThat(inGuest(guest, "env -i curl -sS -m 20 --noproxy '*' --cacert " + caPem + " https://"
                        + server + "/literal; echo curl=$?")).as("a literal address a cidrs rule allows")
                        .isEqualTo("hello from " + server + "\ncurl=0\n");
                // As for a CONNECT: the rule opens the tunnel, network.deny refuses the dial of each request.
                String status = "env -i curl -s -m 20 --noproxy '*' -o /dev/null --cacert " + caPem + " -w ";
                assertThat(inGuest(guest, status + "'%{http_code}\\n' https://" + lan.host(3) + "/; " + status
                        + "'%{http_code}\\n' http://" + server + ":" + OTHER_PORT + "/"))
                        .as("network.deny: another address of the rule's network, another port of the LAN host")
                        .isEqualTo("403\n403\n");
                Map<String, String> targets = new LinkedHashMap<>();
                targets.put("no-rule", "tcp|198.51.100.7|443");
                targets.put("host-service", "tcp|" + sandbox.gateway() + "|" + OTHER_PORT);
                targets.put("admin", "tcp|" + sandbox.gateway() + "|" + proxy.adminAddress().getPort());
                targets.put("udp", "udp|" + server + "|" + OTHER_PORT);
                Map<String, String> closed = lab.probeFrom(guest, targets).results();
                assertThat(closed.get("no-rule")).as("no rule: the proxy accepts and closes, unanswered")
                        .isIn("ok:", "error-104");
                for (String name : List.of("host-service", "admin")) {
                    assertThat(closed.get(name)).as(name + ": a TCP reset from the table").isEqualTo("refused");
                }
                assertThat(closed.get("udp")).doesNotStartWith("ok");
                proxy.flushAudit();
                String records = Files.readString(audit);
                assertThat(records.lines().filter(l -> l.contains("\"path\":\"/literal\"")))
                        .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\"")
                                .contains("\"decision\":\"allow\""));
                for (String refused : List.of("\"host\":\"" + lan.host(3) + "\"", "\"host\":\"198.51.100.7\"",
                        "\"host\":\"" + server + "\",\"port\":" + OTHER_PORT)) {
                    assertThat(records.lines().filter(l -> l.contains(refused))).as(refused)
                            .allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""))
                            .anySatisfy(l -> assertThat(l).contains("\"decision\":\"deny\""));
                }
            }
        }
    }

    /**
     * What nerdctl and CNI would build, and around it: the sandbox's bridge, a guest namespace attached to it, a LAN
     * host's namespace routed through the host (its address {@code lan.host(2)}, serving {@code listeners}) and a
     * host service on the gateway's {@link #OTHER_PORT}; the guest's namespace name.
     */
    private static String guestAndLan(NetLab lab, SandboxNetwork sandbox, Ipv4Subnet lan, String forwardBefore,
                                      String... listeners) throws Exception {
        lab.onClose("sh", "-c", "echo " + forwardBefore + " > " + IP_FORWARD);
        sandbox.teardownCommands().reversed().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
        for (HostCommand command : sandbox.bridgeCommands()) {
            lab.run(command);
        }
        String guest = lab.namespace("guest");
        lab.attach(guest, "spg" + lab.tag(), sandbox.bridgeName(), sandbox.subnet().host(2) + "/24",
                sandbox.gateway());
        String remote = lab.namespace("remote");
        lab.attach(remote, "spr" + lab.tag(), null, lan.host(2) + "/24", lan.host(1));
        lab.run("ip", "addr", "add", lan.host(1) + "/24", "dev", "spr" + lab.tag());
        Files.writeString(IP_FORWARD, "1");
        lab.listenersIn(remote, listeners);
        lab.tcpBanner(InetAddress.getByName(sandbox.gateway()), OTHER_PORT, "host-service");
        return guest;
    }

    /** The test's policy: {@code audit}, the test PKI trusted upstream, one {@code allow_private} entry, {@code rules}. */
    private String policy(Path audit, TestPki pki, String allowPrivate, String rules) {
        return """
                audit: {path: %s}
                upstream:
                  trust: [%s]
                network:
                  deny: default
                  allow_private: ["%s"]
                rules:
                """.formatted(audit, pki.rootPem(dir), allowPrivate) + rules;
    }

    private static String inGuest(String ns, String script) throws IOException {
        return NetLab.SHELL.capture(HostCommand.tolerant("ip", "netns", "exec", ns, "sh", "-c", script)).stdout();
    }
}
