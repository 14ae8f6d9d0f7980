package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The PROXY v2 header the relay writes before a captured connection's first byte, byte for byte (RFC-style layout). */
class ProxyRelayTest {
    private static final byte[] SIGNATURE = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

    @Test
    void anIpv4DestinationIsTcpOverIpv4WithAnUnknownSource() throws Exception {
        byte[] h = ProxyRelay.header(new InetSocketAddress(InetAddress.getByName("198.18.0.7"), 443));
        ByteBuffer b = ByteBuffer.wrap(h);
        assertThat(Arrays.copyOf(h, 12)).isEqualTo(SIGNATURE);
        assertThat(h[12]).isEqualTo((byte) 0x21);               // version 2, PROXY
        assertThat(h[13]).isEqualTo((byte) 0x11);               // TCP over IPv4
        assertThat(b.getShort(14)).isEqualTo((short) 12);
        assertThat(Arrays.copyOfRange(h, 16, 20)).containsOnly(0);
        assertThat(Arrays.copyOfRange(h, 20, 24)).isEqualTo(new byte[] {(byte) 198, 18, 0, 7});
        assertThat(b.getShort(24)).isZero();
        assertThat(b.getShort(26)).isEqualTo((short) 443);
        assertThat(h).hasSize(28);
    }

    @Test
    void anIpv6DestinationIsTcpOverIpv6AndCarriesTheToken() throws Exception {
        InetAddress to = InetAddress.getByName("fd5a:11b0:7f00:53::7");
        byte[] h = ProxyRelay.header(new InetSocketAddress(to, 8443), "tok");
        ByteBuffer b = ByteBuffer.wrap(h);
        assertThat(h[13]).isEqualTo((byte) 0x21);               // TCP over IPv6
        assertThat(b.getShort(14)).isEqualTo((short) (36 + 6));
        assertThat(Arrays.copyOfRange(h, 16, 32)).containsOnly(0);
        assertThat(Arrays.copyOfRange(h, 32, 48)).isEqualTo(to.getAddress());
        assertThat(b.getShort(48)).isZero();
        assertThat(b.getShort(50)).isEqualTo((short) 8443);
        assertThat(Arrays.copyOfRange(h, 52, h.length)).isEqualTo(new byte[] {(byte) ProxyRelay.IDENTITY_TLV, 0, 3,
            't', 'o', 'k'});
    }
}
