package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The host's relay of the sandbox's DNS over UDP, on real sockets of the loopback: the "sandbox" socket is made by
 * {@link Sockets#udpSocket} as {@link Inside} makes it, the "stub" is a UDP server that answers each query with its
 * bytes (answer bit set), so each asker can tell its own answer from another's.
 */
class DnsDatagramRelayTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private DatagramChannel stub;
    private Thread stubThread;
    private final List<Short> idsAtStub = new CopyOnWriteArrayList<>();
    private int inside;
    private DnsDatagramRelay relay;

    @BeforeEach
    void start() throws IOException {
        stub = DatagramChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
        stubThread = Thread.ofPlatform().daemon().start(this::answer);
        inside = Sockets.udpSocket(0);
        relay = DnsDatagramRelay.start(inside, (InetSocketAddress) stub.getLocalAddress());
    }

    @AfterEach
    void stop() throws Exception {
        relay.close();
        stub.close();
        stubThread.join(5_000);
    }

    private void answer() {
        ByteBuffer b = ByteBuffer.allocate(4096);
        while (stub.isOpen()) {
            try {
                b.clear();
                InetSocketAddress from = (InetSocketAddress) stub.receive(b);
                b.flip();
                idsAtStub.add(b.getShort(0));
                b.put(2, (byte) (b.get(2) | 0x80));
                stub.send(b, from);
            } catch (IOException e) {
                return;
            }
        }
    }

    @Test
    void twoAskersWithTheSameIdEachGetTheirOwnAnswer() throws IOException {
        int port = Sockets.localPort(inside);
        try (DatagramSocket a = client(); DatagramSocket b = client()) {
            a.send(query(0x1234, "alpha", port));
            b.send(query(0x1234, "bravo", port));
            byte[] toA = receive(a);
            byte[] toB = receive(b);
            assertThat(toA).isNotNull();
            assertThat(toB).isNotNull();
            assertThat(new String(toA, StandardCharsets.US_ASCII)).contains("alpha").doesNotContain("bravo");
            assertThat(new String(toB, StandardCharsets.US_ASCII)).contains("bravo").doesNotContain("alpha");
            assertThat(toA[0] & 0xff).isEqualTo(0x12);
            assertThat(toA[1] & 0xff).isEqualTo(0x34);
            assertThat(toA[2] & 0x80).as("the stub's answer, relayed").isEqualTo(0x80);
            assertThat(idsAtStub).hasSize(2).doesNotHaveDuplicates();
        }
    }

    @Test
    void aDatagramShorterThanADnsHeaderIsNotRelayed() throws IOException {
        int port = Sockets.localPort(inside);
        try (DatagramSocket a = client()) {
            a.send(new DatagramPacket(new byte[5], 5, LOOPBACK, port));
            a.send(query(7, "after", port));
            byte[] answer = receive(a);
            assertThat(answer).isNotNull();
            assertThat(new String(answer, StandardCharsets.US_ASCII)).contains("after");
            assertThat(idsAtStub).hasSize(1);
        }
    }

    @Test
    void afterCloseNothingIsRelayed() throws IOException {
        int port = Sockets.localPort(inside);
        relay.close();
        try (DatagramSocket a = client()) {
            a.send(query(9, "late", port));
            assertThat(receive(a)).isNull();
            assertThat(idsAtStub).isEmpty();
        }
    }

    private static DatagramSocket client() throws IOException {
        DatagramSocket s = new DatagramSocket(new InetSocketAddress(LOOPBACK, 0));
        s.setSoTimeout(2_000);
        return s;
    }

    /** The answer, or null when none came within the socket's timeout (or the port was closed). */
    private static byte[] receive(DatagramSocket s) throws IOException {
        DatagramPacket p = new DatagramPacket(new byte[4096], 4096);
        try {
            s.receive(p);
        } catch (SocketTimeoutException | java.net.PortUnreachableException e) {
            return null;
        }
        return Arrays.copyOf(p.getData(), p.getLength());
    }

    /** A query's header with {@code id} and one question for {@code label}. */
    private static DatagramPacket query(int id, String label, int port) {
        byte[] name = label.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(12 + 1 + name.length + 1 + 4).putShort((short) id).putShort((short) 0x0100)
                .putShort((short) 1).putShort((short) 0).putInt(0).put((byte) name.length).put(name).put((byte) 0)
                .putShort((short) 1).putShort((short) 1);
        return new DatagramPacket(b.array(), b.capacity(), LOOPBACK, port);
    }
}
