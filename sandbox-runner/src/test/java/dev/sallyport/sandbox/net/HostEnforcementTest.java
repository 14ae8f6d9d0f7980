package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The VM backend's network confinement, for real: the test builds what nerdctl + CNI build for a container (a
 * bridge with the gateway address, a network namespace attached by a veth pair with a default route via the
 * gateway), applies the runner's own nftables table, and proves from inside the namespace that the proxy port on
 * the gateway is the only thing it can reach, and from a namespace routed through the host but not on the bridge
 * (a host on the LAN) that it cannot use the proxy at all.
 *
 * <p>Every destination is first shown reachable without the table (so a failure later is the table's doing,
 * not a missing route), with {@code ip_forward=1} (CNI's bridge plugin turns it on), restored afterwards.
 * Addresses come from 10.231.0.0/16 and live only on interfaces this test creates.
 */
class HostEnforcementTest {

    private static final int PROXY_PORT = 3128;
    private static final int OTHER_PORT = 8080;
    private static final int UDP_PORT = 4000;
    private static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");

    @BeforeAll
    static void requirements() throws Exception {
        NetLab.requireRootWithNetworkTools();
    }

    @Test
    void guestReachesOnlyTheProxyPortOnItsGateway() throws Exception {
        List<Ipv4Subnet> subnets = freeTestSubnets(4);
        String forwardBefore = Files.readString(IP_FORWARD).strip();
        String id = "t" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        SandboxNetwork sandbox = new SandboxNetwork(id, subnets.get(0), PROXY_PORT);
        SandboxNetwork neighbour = new SandboxNetwork(id + "n", subnets.get(1), PROXY_PORT);
        Ipv4Subnet testHostLink = subnets.get(2);
        String hostOnlyAddress = subnets.get(3).host(1);
        try (NetLab lab = new NetLab()) {
            lab.onClose("sh", "-c", "echo " + forwardBefore + " > " + IP_FORWARD);
            for (SandboxNetwork network : List.of(sandbox, neighbour)) {
                network.teardownCommands().reversed().forEach(c -> lab.onClose(c.argv().toArray(String[]::new)));
                for (HostCommand command : network.bridgeCommands()) {
                    lab.run(command);
                }
            }
            // Keep IPv6 on our bridge (the runner turns it off) to show the nft layer alone stops it.
            String bridge = sandbox.bridgeName();
            lab.run("sysctl", "-q", "-w", "net.ipv6.conf." + bridge + ".disable_ipv6=0");
            lab.run("ip", "-6", "addr", "add", "fe80::1/64", "dev", bridge, "nodad");

            String guest = lab.namespace("guest");
            lab.attach(guest, "spg" + lab.tag(), bridge, sandbox.subnet().host(2) + "/24", sandbox.gateway());
            lab.run("ip", "-n", guest, "-6", "addr", "add", "fe80::2/64", "dev", "eth0", "nodad");
            String other = lab.namespace("other");
            lab.attach(other, "spo" + lab.tag(), neighbour.bridgeName(), neighbour.subnet().host(2) + "/24",
                    neighbour.gateway());
            String remote = lab.namespace("remote");
            lab.attach(remote, "spr" + lab.tag(), null, testHostLink.host(2) + "/24", testHostLink.host(1));
            lab.run("ip", "addr", "add", testHostLink.host(1) + "/24", "dev", "spr" + lab.tag());
            // Another address of the host, on an interface the sandbox has nothing to do with.
            lab.run("ip", "addr", "add", hostOnlyAddress + "/32", "dev", "spr" + lab.tag());
            Files.writeString(IP_FORWARD, "1");

            InetAddress gateway = InetAddress.getByName(sandbox.gateway());
            lab.tcpBanner(gateway, PROXY_PORT, "proxy");
            lab.tcpBanner(gateway, OTHER_PORT, "other-port");
            lab.tcpBanner(gateway, 53, "dns-tcp");
            lab.udpEcho(gateway, 53, "dns-udp");
            lab.udpEcho(gateway, UDP_PORT, "udp");
            lab.tcpBanner(InetAddress.getByName(hostOnlyAddress), PROXY_PORT, "host-address");
            lab.tcpBanner(InetAddress.getByName(neighbour.gateway()), PROXY_PORT, "neighbour-gateway");
            lab.tcpBanner(InetAddress.getLoopbackAddress(), 0, "host-loopback");
            lab.tcpBanner(Inet6Address.getByAddress(null, InetAddress.getByName("fe80::1").getAddress(),
                    NetworkInterface.getByName(bridge)), PROXY_PORT, "ipv6-proxy");
            lab.listenersIn(other, "tcp|" + neighbour.subnet().host(2) + "|" + PROXY_PORT + "|other-sandbox");
            lab.listenersIn(guest, "tcp|" + sandbox.subnet().host(2) + "|" + OTHER_PORT + "|guest-service");
            Map<String, String> inbound = Map.of("guest-service", "tcp|" + sandbox.subnet().host(2) + "|" + OTHER_PORT);
            lab.listenersIn(remote, "tcp|" + testHostLink.host(2) + "|" + PROXY_PORT + "|test-host",
                    "udp|" + testHostLink.host(2) + "|" + UDP_PORT + "|test-host-udp");

            Map<String, String> targets = new LinkedHashMap<>();
            targets.put("proxy", "tcp|" + sandbox.gateway() + "|" + PROXY_PORT);
            targets.put("other-port", "tcp|" + sandbox.gateway() + "|" + OTHER_PORT);
            targets.put("host-address", "tcp|" + hostOnlyAddress + "|" + PROXY_PORT);
            targets.put("neighbour-gateway", "tcp|" + neighbour.gateway() + "|" + PROXY_PORT);
            targets.put("other-sandbox", "tcp|" + neighbour.subnet().host(2) + "|" + PROXY_PORT);
            targets.put("test-host", "tcp|" + testHostLink.host(2) + "|" + PROXY_PORT);
            targets.put("test-host-udp", "udp|" + testHostLink.host(2) + "|" + UDP_PORT);
            targets.put("udp", "udp|" + sandbox.gateway() + "|" + UDP_PORT);
            targets.put("dns-udp", "udp|" + sandbox.gateway() + "|53");
            targets.put("dns-tcp", "tcp|" + sandbox.gateway() + "|53");
            targets.put("ipv6-proxy", "tcp|fe80::1%eth0|" + PROXY_PORT);

            NetLab.Probed open = lab.probeFrom(guest, targets);
            Map<String, String> expectedOpen = new LinkedHashMap<>();
            targets.keySet().forEach(name -> expectedOpen.put(name, "ok:" + name));
            assertThat(open.results())
                    .as("without the table every destination answers (routes and forwarding work)")
                    .isEqualTo(expectedOpen);

            assertThat(lab.probeFrom(other, inbound).results()).as("another sandbox reaches the guest without the table")
                    .containsEntry("guest-service", "ok:guest-service");
            Map<String, String> relay = Map.of("lan-to-proxy", "tcp|" + sandbox.gateway() + "|" + PROXY_PORT);
            assertThat(lab.probeFrom(remote, relay).results()).as("a LAN host reaches the gateway address without "
                    + "the table (Linux answers for a local address on any interface)")
                    .containsEntry("lan-to-proxy", "ok:proxy");

            lab.run(sandbox.firewallCommand());
            assertThat(lab.probeFrom(remote, relay).results().get("lan-to-proxy"))
                    .as("a LAN host cannot use the sandbox's proxy as an egress relay").isEqualTo("timeout");
            try (Socket local = new Socket(gateway, PROXY_PORT);
                 BufferedReader in = new BufferedReader(new InputStreamReader(local.getInputStream(),
                         StandardCharsets.US_ASCII))) {
                assertThat(in.readLine()).as("the host itself still reaches the gateway (over lo)").isEqualTo("proxy");
            }
            assertThat(lab.probeFrom(other, inbound).results().get("guest-service"))
                    .as("nothing is routed into the sandbox (oifname drop)").isEqualTo("timeout");
            NetLab.Probed closed = lab.probeFrom(guest, targets);
            assertThat(closed.results()).as("with the table only the proxy answers")
                    .containsEntry("proxy", "ok:proxy").hasSize(targets.size());
            for (String name : targets.keySet()) {
                if (!name.equals("proxy")) {
                    assertThat(closed.results().get(name)).as(name).doesNotStartWith("ok");
                }
            }
            for (String name : List.of("other-port", "host-address", "neighbour-gateway", "dns-tcp")) {
                assertThat(closed.results().get(name)).as(name + ": a TCP reset, so clients fail fast")
                        .isEqualTo("refused");
                assertThat(closed.millis().get(name)).as(name + " failed fast (ms)").isLessThan(1000);
            }
            for (String name : List.of("other-sandbox", "test-host")) {
                assertThat(closed.results().get(name)).as(name + ": forwarding rejected (admin-prohibited)")
                        .isEqualTo("unreachable");
            }

            NetLab.Probed loopback = lab.probeFrom(guest, Map.of("host-loopback",
                    "tcp|127.0.0.1|" + PROXY_PORT));
            assertThat(loopback.results().get("host-loopback")).as("the host's loopback is not the guest's")
                    .doesNotStartWith("ok");

            for (HostCommand command : sandbox.teardownCommands()) {
                lab.run(command);
            }
            CommandResult tables = NetLab.SHELL.capture(HostCommand.of("nft", "list", "tables"));
            assertThat(tables.stdout()).doesNotContain(sandbox.tableName());
            assertThat(Files.exists(Path.of("/sys/class/net", bridge))).as("bridge removed").isFalse();
        } finally {
            assertThat(Files.readString(IP_FORWARD).strip()).as("ip_forward restored").isEqualTo(forwardBefore);
        }
    }

    /** Free /24s in 10.231.0.0/16, clear of everything the host already uses. */
    static List<Ipv4Subnet> freeTestSubnets(int count) throws Exception {
        List<Ipv4Subnet> used = new ArrayList<>(SubnetPool.inUse());
        List<Ipv4Subnet> picked = new ArrayList<>();
        int start = ThreadLocalRandom.current().nextInt(256);
        Ipv4Subnet pool = Ipv4Subnet.parse("10.231.0.0/16");
        for (int i = 0; i < 256 && picked.size() < count; i++) {
            Ipv4Subnet candidate = new Ipv4Subnet(pool.base() + (((start + i) % 256) << 8), 24);
            if (used.stream().noneMatch(candidate::overlaps)) {
                picked.add(candidate);
                used.add(candidate);
            }
        }
        assertThat(picked).as("free test subnets in " + pool).hasSize(count);
        return picked;
    }
}
