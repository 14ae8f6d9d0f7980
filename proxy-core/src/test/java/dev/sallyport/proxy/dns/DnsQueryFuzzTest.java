package dev.sallyport.proxy.dns;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponseDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DnsRawRecord;
import io.netty.handler.codec.dns.DnsResponse;
import io.netty.handler.codec.dns.DnsSection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.time.InstantSource;

/**
 * Fuzz target: one UDP datagram of any bytes into the DNS stub's pipeline as {@link DnsServer} builds it. Nothing
 * escapes the pipeline; at most one answer goes back, which Netty's response decoder reads, carrying the query's
 * id; an address is answered only for a name the policy could allow, and it is a synthetic one; the name the
 * policy denies ({@code internal.example.com}) is never answered, however its labels are spelled. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/dns/DnsQueryFuzzTestInputs/}.
 */
class DnsQueryFuzzTest {

    private static final PolicyEngine ENGINE;
    private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 5353);
    private static final InetSocketAddress STUB = new InetSocketAddress("127.0.0.1", 53);

    static {
        try {
            ENGINE = PolicyEngine.compile(PolicyLoader.parse("""
                    rules:
                      - name: internal
                        action: deny
                        hosts: [internal.example.com]
                      - name: example
                        hosts: ["*.example.com", api.example.org]
                    """, "fuzz.yaml"));
        } catch (PolicyException e) {
            throw new IllegalStateException(e);
        }
    }

    @FuzzTest
    void onlyAllowedNamesGetAnAddress(byte[] datagram) throws Exception {
        DnsStub stub = new DnsStub(() -> ENGINE, new SyntheticAddresses(16, Duration.ofMinutes(10),
                Ticker.systemTicker()), new LookupAudit(e -> { }, InstantSource.system(), 5, 2), true);
        EmbeddedChannel server = new EmbeddedChannel(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(),
                new DnsQueryHandler(stub, true, DnsStub.Families.BOTH));
        server.writeInbound(new DatagramPacket(Unpooled.wrappedBuffer(datagram), STUB, CLIENT));
        server.checkException();
        DatagramPacket reply = server.readOutbound();
        Object more = server.readOutbound();
        assertThat(more).as("one answer at most").isNull();
        server.finishAndReleaseAll();
        if (reply == null) {
            return;
        }
        EmbeddedChannel client = new EmbeddedChannel(new DatagramDnsResponseDecoder());
        try {
            client.writeInbound(new DatagramPacket(reply.content(), CLIENT, STUB));
            DnsResponse response = client.readInbound();
            assertThat(response).as("the answer decodes").isNotNull();
            try {
                assertThat(response.id()).isEqualTo(((datagram[0] & 0xff) << 8) | (datagram[1] & 0xff));
                for (int i = 0; i < response.count(DnsSection.ANSWER); i++) {
                    DnsRawRecord answer = response.recordAt(DnsSection.ANSWER, i);
                    String name = answer.name();
                    assertThat(ENGINE.onLookup(name, null).permitsTraffic()).as("answered %s", name).isTrue();
                    String plain = name.toLowerCase(java.util.Locale.ROOT).replaceAll("\\.+$", "");
                    assertThat(plain).as("the denied name").isNotEqualTo("internal.example.com");
                    byte[] address = new byte[answer.content().readableBytes()];
                    answer.content().getBytes(answer.content().readerIndex(), address);
                    assertThat(SyntheticAddresses.isSynthetic(InetAddress.getByAddress(address))).isTrue();
                }
            } finally {
                response.release();
            }
        } finally {
            client.finishAndReleaseAll();
        }
    }
}
