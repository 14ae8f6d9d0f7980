package dev.sallyport.proxy.identity;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The headers a relay writes before a sandbox's first byte, byte for byte (the PROXY v2 layout), and what the proxy
 * reads back from them; malformed ones are refused with one line.
 */
class RelayHeaderTest {
    private static final byte[] SIGNATURE = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

    @Test
    void anIpv4DestinationIsTcpOverIpv4WithAnUnknownSource() throws Exception {
        byte[] h = RelayHeader.transparent(new InetSocketAddress(InetAddress.getByName("198.18.0.7"), 443), null);
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
        byte[] h = RelayHeader.transparent(new InetSocketAddress(to, 8443), "tok");
        ByteBuffer b = ByteBuffer.wrap(h);
        assertThat(h[13]).isEqualTo((byte) 0x21);               // TCP over IPv6
        assertThat(b.getShort(14)).isEqualTo((short) (36 + 6));
        assertThat(Arrays.copyOfRange(h, 16, 32)).containsOnly(0);
        assertThat(Arrays.copyOfRange(h, 32, 48)).isEqualTo(to.getAddress());
        assertThat(b.getShort(48)).isZero();
        assertThat(b.getShort(50)).isEqualTo((short) 8443);
        assertThat(Arrays.copyOfRange(h, 52, h.length)).isEqualTo(new byte[] {(byte) RelayHeader.TOKEN_TLV, 0, 3,
            't', 'o', 'k'});
    }

    @Test
    void explicitAndDnsHeadersAreLocalWithTheirTlvs() {
        byte[] e = RelayHeader.explicit("tok");
        assertThat(Arrays.copyOf(e, 12)).isEqualTo(SIGNATURE);
        assertThat(Arrays.copyOfRange(e, 12, e.length)).isEqualTo(new byte[] {0x20, 0x00, 0, 6,
            (byte) RelayHeader.TOKEN_TLV, 0, 3, 't', 'o', 'k'});
        byte[] d = RelayHeader.dns("tok", true);
        assertThat(Arrays.copyOfRange(d, 12, d.length)).isEqualTo(new byte[] {0x20, 0x00, 0, 10,
            (byte) RelayHeader.TOKEN_TLV, 0, 3, 't', 'o', 'k', (byte) RelayHeader.DNS_TLV, 0, 1, RelayHeader.DNS_AAAA});
    }

    @Test
    void whatIsWrittenReadsBackAndTheSandboxsBytesStayAfterIt() throws Exception {
        InetSocketAddress to = new InetSocketAddress(InetAddress.getByName("fd5a:11b0:7f00:53::7"), 8443);
        assertThat(read(RelayHeader.transparent(to, "tok"))).isEqualTo(new RelayHeader(RelayHeader.Kind.TRANSPARENT,
                "tok", to, false));
        assertThat(read(RelayHeader.explicit("tok"))).isEqualTo(new RelayHeader(RelayHeader.Kind.EXPLICIT, "tok",
                null, false));
        assertThat(read(RelayHeader.dns("tok", true))).isEqualTo(new RelayHeader(RelayHeader.Kind.DNS, "tok", null,
                true));
        ByteBuf in = Unpooled.wrappedBuffer(RelayHeader.dns("tok", false), new byte[] {0, 29});
        assertThat(RelayHeader.read(in)).isInstanceOf(RelayHeader.Read.Complete.class);
        assertThat(in.readableBytes()).isEqualTo(2);
        in.release();
    }

    @Test
    void aHeaderCutShortWaitsAndAMalformedOneSaysWhy() {
        byte[] whole = RelayHeader.explicit("tok");
        ByteBuf part = Unpooled.wrappedBuffer(Arrays.copyOf(whole, whole.length - 1));
        assertThat(RelayHeader.read(part)).isInstanceOf(RelayHeader.Read.Incomplete.class);
        assertThat(part.readerIndex()).isZero();
        part.release();
        byte[] dnsOnProxy = RelayHeader.transparent(new InetSocketAddress(InetAddress.getLoopbackAddress(), 53), "t");
        byte[] withDns = Arrays.copyOf(dnsOnProxy, dnsOnProxy.length + 4);
        System.arraycopy(new byte[] {(byte) RelayHeader.DNS_TLV, 0, 1, 0}, 0, withDns, dnsOnProxy.length, 4);
        withDns[15] = (byte) (withDns[15] + 4);
        assertThat(malformed(withDns)).isEqualTo("a DNS TLV that is not one byte of a LOCAL header, once");
        byte[] localWithAddresses = whole.clone();
        localWithAddresses[13] = 0x11;
        assertThat(malformed(localWithAddresses)).isEqualTo("command 0x20 family 0x11 (expected: LOCAL unspecified, "
                + "or PROXY over TCP)");
        byte[] overrun = whole.clone();
        overrun[15] = 5;
        assertThat(malformed(Arrays.copyOf(overrun, 21))).isEqualTo("a TLV runs past the header's end");
        byte[] twoTokens = Arrays.copyOf(whole, whole.length + 6);
        System.arraycopy(whole, 16, twoTokens, whole.length, 6);
        twoTokens[15] = 12;
        assertThat(malformed(twoTokens)).isEqualTo("two tokens");
    }

    private static RelayHeader read(byte[] bytes) {
        return readAs(bytes, RelayHeader.Read.Complete.class).header();
    }

    private static String malformed(byte[] bytes) {
        return readAs(bytes, RelayHeader.Read.Malformed.class).why();
    }

    private static <T extends RelayHeader.Read> T readAs(byte[] bytes, Class<T> kind) {
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        try {
            return kind.cast(RelayHeader.read(in));
        } finally {
            in.release();
        }
    }
}
