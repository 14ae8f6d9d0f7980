package dev.sallyport.proxy.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.junit.jupiter.api.Test;

class ClientKeyTest {

    private static ClientKey key(String ip, int port) throws Exception {
        return ClientKey.of(new InetSocketAddress(InetAddress.getByName(ip), port));
    }

    @Test
    void anIpv4ClientIsItsAddressWhateverThePort() throws Exception {
        assertThat(key("127.0.0.2", 5000)).isEqualTo(key("127.0.0.2", 6000)).hasToString("127.0.0.2");
        assertThat(key("127.0.0.2", 5000)).isNotEqualTo(key("127.0.0.3", 5000));
    }

    @Test
    void ipv6ClientsCountPerSlash64SoRotatingAddressesWithinItDoesNotHelp() throws Exception {
        assertThat(key("2001:db8:1:2::1", 1)).isEqualTo(key("2001:db8:1:2:ffff:ffff:ffff:fffe", 2))
                .hasToString("2001:db8:1:2::/64");
        assertThat(key("2001:db8:1:2::1", 1)).isNotEqualTo(key("2001:db8:1:3::1", 1));
        assertThat(key("::1", 1)).hasToString("::/64");
        assertThat(key("fe80::1%1", 1)).isEqualTo(key("fe80::2", 1));   // zones do not split a network
    }

    @Test
    void anIpv4MappedAddressCountsAsItsIpv4Address() throws Exception {
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 127, 0, 0, 2};
        SocketAddress v6 = new InetSocketAddress(java.net.Inet6Address.getByAddress(null, mapped, -1), 1);
        assertThat(ClientKey.of(v6)).isEqualTo(key("127.0.0.2", 1));
    }

    @Test
    void aClientWithoutAnIpAddressIsUnattributed() {
        assertThat(ClientKey.of(new SocketAddress() {})).isEqualTo(new ClientKey.Unattributed());
    }

    @Test
    void aNetworkWithHostBitsIsRefused() throws Exception {
        assertThatThrownBy(() -> new ClientKey.SourceNetwork(InetAddress.getByName("2001:db8::1"), 64))
                .hasMessage("network: 2001:db8:0:0:0:0:0:1 has bits past /64 (expected: a network address)");
        assertThatThrownBy(() -> new ClientKey.SourceNetwork(InetAddress.getByName("10.0.0.1"), 24))
                .hasMessage("prefixLength: 24 (expected: 32 for 10.0.0.1)");
    }
}
