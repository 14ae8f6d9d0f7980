package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
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
            lab.onClose("sh", "-c", "echo " + forwardBefore + " > " + IP_FORWARD);
            sandbox.teardownCommands().reversed().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
            for (HostCommand command : sandbox.bridgeCommands()) {
                lab.run(command);
            }
            String guest = lab.namespace("guest");
            lab.attach(guest, "spg" + lab.tag(), sandbox.bridgeName(), sandbox.subnet().host(2) + "/24",
                    sandbox.gateway());
            Path etc = Path.of("/etc/netns", guest);
            if (!Files.exists(etc.getParent())) {
                lab.onClose("rmdir", etc.getParent().toString());
            }
            lab.onClose("rm", "-rf", etc.toString());
            Files.createDirectories(etc);
            Files.writeString(etc.resolve("resolv.conf"), "nameserver " + sandbox.gateway() + "\n");
            String remote = lab.namespace("remote");
            lab.attach(remote, "spr" + lab.tag(), null, lan.host(2) + "/24", lan.host(1));
            lab.run("ip", "addr", "add", lan.host(1) + "/24", "dev", "spr" + lab.tag());
            Files.writeString(IP_FORWARD, "1");
            lab.listenersIn(remote, "tcp|" + lan.host(2) + "|" + OTHER_PORT + "|lan-host");
            InetAddress gateway = InetAddress.getByName(sandbox.gateway());
            lab.tcpBanner(gateway, OTHER_PORT, "host-service");

            Path audit = dir.resolve("audit.jsonl");
            CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Test CA");
            Path caPem = Files.write(dir.resolve("ca.pem"), CaExport.pem(ca, false));
            String policy = """
                    audit: {path: %s}
                    upstream:
                      trust: [%s]
                    network:
                      deny: default
                      allow_private: ["127.0.0.1:%d"]
                    rules:
                      - name: allowed
                        hosts: [%s]
                        ports: [%d]
                    """.formatted(audit, pki.rootPem(dir), site.port(), ALLOWED, site.port());
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

    private static String inGuest(String ns, String script) throws IOException {
        return NetLab.SHELL.capture(HostCommand.tolerant("ip", "netns", "exec", ns, "sh", "-c", script)).stdout();
    }
}
