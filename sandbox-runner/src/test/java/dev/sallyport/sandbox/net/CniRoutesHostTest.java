package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.sandbox.vm.NerdctlCommand;
import dev.sallyport.sandbox.vm.StandInNerdctl;
import dev.sallyport.sandbox.vm.VmSandbox;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The guest's routes, for real: the conflist as {@code nerdctl network create --internal} writes it (by the test's
 * nerdctl stand-in, which writes nerdctl's format and prints its native inspect output), then CNI's own bridge
 * plugin with host-local IPAM ({@code CNI_COMMAND=ADD}, the plugin's entry of the conflist with {@code cniVersion}
 * and {@code name} as libcni passes it, host-local's {@code dataDir} in a temporary folder) on a network namespace
 * the test creates, attached to the runner's bridge with the runner's table loaded. Before the runner's edit the
 * namespace has no route to the synthetic prefix and a connection to a synthetic address fails in the namespace;
 * after it, {@code 198.18.0.0/15 via GATEWAY} is there (and the default route only with captured literal addresses),
 * and that connection lands, through the table's DNAT, on the transparent port of the gateway. The host's
 * {@code ip_forward} is the same before and after (no {@code isGateway}).
 */
class CniRoutesHostTest {

    private static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @BeforeAll
    static void requirements() throws Exception {
        NetLab.requireRootWithNetworkTools();
    }

    @ParameterizedTest
    @EnumSource(LiteralAddresses.class)
    void theBridgePluginGivesTheNamespaceTheRoutesTheRunnerAddedToNerdctlsConflist(LiteralAddresses literals)
            throws Exception {
        Path nerdctl = StandInNerdctl.write(dir);
        Path plugins = List.of(Path.of("/usr/lib/cni"), Path.of("/opt/cni/bin")).stream()   // as the stand-in's
                .filter(d -> Files.isExecutable(d.resolve("bridge")) && Files.isExecutable(d.resolve("host-local")))
                .findFirst().orElseThrow();
        SandboxNetwork sandbox = new SandboxNetwork("r" + Integer.toHexString(ThreadLocalRandom.current()
                .nextInt(1 << 24)), HostEnforcementTest.freeTestSubnets(1).getFirst(), VmSandbox.PROXY_PORT)
                .withLiterals(literals);
        String gw = sandbox.gateway();
        String forwardBefore = Files.readString(IP_FORWARD).strip();
        try (NetLab lab = new NetLab()) {
            sandbox.teardownCommands().reversed().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
            lab.run(HostCommand.of(NerdctlCommand.networkCreate(nerdctl.toString(), sandbox).toArray(String[]::new)));
            String inspect = NetLab.SHELL.capture(HostCommand.of(NerdctlCommand.networkInspect(nerdctl.toString(),
                    sandbox).toArray(String[]::new))).stdout();
            CniConflist.Inspected inspected = CniConflist.inspected(inspect, sandbox.networkName());
            assertThat(inspected.bridge()).isEqualTo(sandbox.bridgeName());
            assertThat(inspected.file().getFileName()).hasToString("nerdctl-" + sandbox.networkName() + ".conflist");
            for (HostCommand command : sandbox.bridgeCommands()) {
                lab.run(command);
            }
            lab.run(sandbox.firewallCommand());
            lab.tcpBanner(InetAddress.getByName(gw), sandbox.transparentPort(), "transparent");
            String ns = lab.namespace("cni");
            Map<String, String> targets = new LinkedHashMap<>();
            targets.put("synthetic", "tcp|198.18.3.4|443");
            targets.put("literal", "tcp|192.0.2.7|443");

            Map<String, String> before = attached(plugins, inspected.file(), sandbox, ns, () -> {
                assertThat(routes(ns)).as("as nerdctl wrote it: the subnet only")
                        .noneMatch(r -> r.startsWith("198.18.") || r.startsWith("default"));
                return lab.probeFrom(ns, targets).results();
            });
            assertThat(before).as("no route: the connection fails in the namespace")
                    .containsEntry("synthetic", "unreachable").containsEntry("literal", "unreachable");

            CniConflist.addRoutes(inspected.file(), sandbox.networkName(), sandbox.guestRoutes());

            Map<String, String> after = attached(plugins, inspected.file(), sandbox, ns, () -> {
                List<String> routes = routes(ns);
                assertThat(routes).contains("198.18.0.0/15 via " + gw + " dev eth0");
                if (literals == LiteralAddresses.CAPTURE) {
                    assertThat(routes).contains("default via " + gw + " dev eth0");
                } else {
                    assertThat(routes).noneMatch(r -> r.startsWith("default"));
                }
                return lab.probeFrom(ns, targets).results();
            });
            assertThat(after.get("synthetic")).as("routed to the gateway, DNATed by the table to the transparent port")
                    .isEqualTo("ok:transparent");
            assertThat(after.get("literal")).isEqualTo(literals == LiteralAddresses.CAPTURE ? "ok:transparent"
                    : "unreachable");
            assertThat(Files.readString(IP_FORWARD).strip()).as("the bridge plugin left the host's ip_forward alone "
                    + "(another test changing it meanwhile would show here too)").isEqualTo(forwardBefore);
            try (var leases = Files.list(dir.resolve("ipam").resolve(sandbox.networkName()))) {
                assertThat(leases.map(p -> p.getFileName().toString())).as("host-local released the address on DEL")
                        .noneMatch(name -> name.equals(sandbox.guest()));
            }
        }
    }

    /** What the test does while the namespace is attached. */
    private interface WhileAttached {
        Map<String, String> run() throws Exception;
    }

    /** Runs the bridge plugin's ADD on {@code ns} from {@code conflist}, then {@code body}, then DEL. */
    private Map<String, String> attached(Path plugins, Path conflist, SandboxNetwork sandbox, String ns,
                                         WhileAttached body) throws Exception {
        cni("ADD", plugins, conflist, sandbox, ns);
        try {
            return body.run();
        } finally {
            cni("DEL", plugins, conflist, sandbox, ns);
        }
    }

    /** Calls the bridge plugin as libcni does for the conflist's entry of type bridge; its stdout. */
    private String cni(String command, Path plugins, Path conflist, SandboxNetwork sandbox, String ns)
            throws Exception {
        ObjectNode list = (ObjectNode) JSON.readTree(conflist.toFile());
        ObjectNode bridge = null;
        for (var plugin : list.withArray("plugins")) {
            if ("bridge".equals(plugin.path("type").asText())) {
                bridge = ((ObjectNode) plugin).deepCopy();
            }
        }
        assertThat(bridge).as("the conflist's bridge plugin").isNotNull();
        bridge.put("cniVersion", list.path("cniVersion").asText());
        bridge.put("name", list.path("name").asText());
        ((ObjectNode) bridge.path("ipam")).put("dataDir", dir.resolve("ipam").toString());
        ProcessBuilder builder = new ProcessBuilder(plugins.resolve("bridge").toString());
        Map<String, String> env = builder.environment();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", ns);
        env.put("CNI_NETNS", "/var/run/netns/" + ns);
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", plugins.toString());
        env.put("CNI_ARGS", "IgnoreUnknown=1;IP=" + sandbox.guest());   // what nerdctl's OCI hook passes for --ip
        Process process = builder.redirectErrorStream(true).start();
        try (var stdin = process.getOutputStream()) {
            stdin.write(JSON.writeValueAsBytes(bridge));
        }
        byte[] out = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("bridge plugin " + command + " finished").isTrue();
        String text = new String(out, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("bridge plugin " + command + ": " + text).isZero();
        return text;
    }

    /** The namespace's IPv4 routes, one a line, trailing spaces dropped. */
    private static List<String> routes(String ns) throws IOException {
        List<String> routes = new ArrayList<>();
        NetLab.SHELL.capture(HostCommand.of("ip", "-n", ns, "-4", "route", "show")).stdout().lines()
                .map(String::strip).forEach(routes::add);
        return routes;
    }
}
