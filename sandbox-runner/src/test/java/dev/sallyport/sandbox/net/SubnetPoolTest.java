package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SubnetPoolTest {

    @Test
    void subnetsParseAndOverlap() {
        Ipv4Subnet a = Ipv4Subnet.parse("10.213.7.0/24");
        assertThat(a.gateway()).isEqualTo("10.213.7.1");
        assertThat(a.host(2)).isEqualTo("10.213.7.2");
        assertThat(a.overlaps(Ipv4Subnet.parse("10.0.0.0/8"))).isTrue();
        assertThat(a.overlaps(Ipv4Subnet.parse("10.213.8.0/24"))).isFalse();
        assertThat(a.contains(Ipv4Subnet.parseAddress("10.213.7.200"))).isTrue();
        assertThatThrownBy(() -> Ipv4Subnet.parse("10.213.7.1/24"))
                .hasMessage("subnet: 10.213.7.1/24 has host bits set (expected: 10.213.7.0/24)");
        assertThatThrownBy(() -> Ipv4Subnet.parse("10.213.7.0/31")).hasMessage("prefix: 31 (expected: 8..30)");
    }

    @Test
    void pickSkipsWhatIsTakenAndStaysInThePool() {
        List<Ipv4Subnet> taken = new ArrayList<>();
        Ipv4Subnet first = SubnetPool.pick("abcd", taken);
        taken.add(first);
        Ipv4Subnet second = SubnetPool.pick("abcd", taken);

        assertThat(second).isNotEqualTo(first);
        assertThat(SubnetPool.POOL.overlaps(first)).isTrue();
        assertThat(SubnetPool.POOL.overlaps(second)).isTrue();
        assertThat(SubnetPool.pick("abcd", List.of(Ipv4Subnet.parse("10.0.0.0/8")).subList(0, 0))).isEqualTo(first);
        assertThatThrownBy(() -> SubnetPool.pick("abcd", List.of(Ipv4Subnet.parse("10.0.0.0/8"))))
                .hasMessageStartingWith("subnet pool 10.213.0.0/16: every /24 is in use");
    }

    @Test
    void procRoutesAreRead() {
        List<Ipv4Subnet> routes = SubnetPool.parseProcRoutes(List.of(
                "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT",
                "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0",
                "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0"));

        assertThat(routes).containsExactly(Ipv4Subnet.parse("192.0.2.0/24"));
    }

    @Test
    void subnetsOfDeclaredCniNetworksAreTakenEvenWithoutTheirBridges(@TempDir Path netconf) throws Exception {
        Files.writeString(netconf.resolve("nerdctl-sallyport-ab12.conflist"), """
                {"cniVersion": "1.0.0", "name": "sallyport-ab12", "plugins": [{"type": "bridge",
                  "ipam": {"type": "host-local", "ranges": [[{"gateway": "10.213.5.1", "subnet": "10.213.5.0/24"}]]}}]}
                """);
        Files.createDirectories(netconf.resolve("buildkit"));
        Files.writeString(netconf.resolve("buildkit/nerdctl-other.conflist"), "{\"subnet\" : \"10.213.6.0/24\"}");
        Files.writeString(netconf.resolve("notes.txt"), "\"subnet\": \"10.213.7.0/24\"");

        List<Ipv4Subnet> declared = SubnetPool.declared(netconf);

        assertThat(declared).containsExactlyInAnyOrder(Ipv4Subnet.parse("10.213.5.0/24"),
                Ipv4Subnet.parse("10.213.6.0/24"));
        List<Ipv4Subnet> taken = new ArrayList<>(declared);
        for (int i = 0; i < 3; i++) {
            Ipv4Subnet picked = SubnetPool.pick("abcd", taken);
            assertThat(declared).noneMatch(picked::overlaps);
            taken.add(picked);
        }
        assertThat(SubnetPool.declared(netconf.resolve("absent"))).isEmpty();
    }

    @Test
    void inUseSeesThisHostsOwnNetworks() throws Exception {
        assertThat(SubnetPool.inUse()).anyMatch(s -> s.contains(Ipv4Subnet.parseAddress("127.0.0.1")));
    }
}
