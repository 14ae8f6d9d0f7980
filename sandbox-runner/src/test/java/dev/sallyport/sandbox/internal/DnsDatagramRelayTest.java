package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The host's relay of the sandbox's DNS over UDP, on real sockets of the loopback: the "sandbox" socket is made by
 * {@link Sockets#udpSocket} as {@link Inside} makes it, the "stub" is a DNS-over-TCP server that checks that each
 * connection begins with the relay's header and answers each query with its bytes (answer bit set), so each asker
 * can tell its own answer from another's.
 */
class DnsDatagramRelayTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private static final byte[] HEADER = "relay-header".getBytes(StandardCharsets.US_ASCII);

    private ServerSocketChannel stub;
    private Thread stubThread;
    private final List<Short> idsAtStub = new CopyOnWriteArrayList<>();
    private final List<String> headersAtStub = new CopyOnWriteArrayList<>();
    private final List<SocketChannel> connections = new CopyOnWriteArrayList<>();
    private int inside;
    private DnsDatagramRelay relay;

    @BeforeEach
    void start() throws IOException {
        stub = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
        stubThread = Thread.ofPlatform().daemon().start(this::accept);
        inside = Sockets.udpSocket(0);
        relay = DnsDatagramRelay.start(inside, (InetSocketAddress) stub.getLocalAddress(), HEADER);
    }

    @AfterEach
    void stop() throws Exception {
        relay.close();
        stub.close();
        for (SocketChannel c : connections) {
            c.close();
        }
        stubThread.join(5_000);
    }

    private void accept() {
        while (stub.isOpen()) {
            try {
                SocketChannel c = stub.accept();
                connections.add(c);
                Thread.ofPlatform().daemon().start(() -> answer(c));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void answer(SocketChannel c) {
        try {
            ByteBuffer header = ByteBuffer.allocate(HEADER.length);
            fill(c, header);
            headersAtStub.add(new String(header.array(), StandardCharsets.US_ASCII));
            while (true) {
                ByteBuffer length = ByteBuffer.allocate(2);
                fill(c, length);
                ByteBuffer b = ByteBuffer.allocate(length.getShort(0));
                fill(c, b);
                idsAtStub.add(b.getShort(0));
                b.put(2, (byte) (b.get(2) | 0x80));
                c.write(ByteBuffer.allocate(2 + b.capacity()).putShort((short) b.capacity()).put(b.flip()).flip());
            }
        } catch (IOException e) {
            // closed
        }
    }

    private static void fill(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new java.io.EOFException();
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
    void aConnectionTheStubClosedIsOpenedAgainWithTheHeaderFirst() throws Exception {
        int port = Sockets.localPort(inside);
        try (DatagramSocket a = client()) {
            a.send(query(1, "first", port));
            assertThat(receive(a)).isNotNull();
            connections.getFirst().close();           // the proxy closes an idle connection
            dev.sallyport.testing.Await.until("the relay saw the close", java.time.Duration.ofSeconds(10), () -> {
                try {
                    a.send(query(2, "again", port));
                    byte[] answer = receive(a);
                    return answer != null && new String(answer, StandardCharsets.US_ASCII).contains("again");
                } catch (IOException e) {
                    return false;
                }
            });
            assertThat(headersAtStub).hasSizeGreaterThanOrEqualTo(2).containsOnly("relay-header");
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

    @Test
    void withOneAskerAQuestionFromAnyOtherSourceIsRefusedThereAndReported() throws IOException {
        List<InetAddress> strangers = new CopyOnWriteArrayList<>();
        InetAddress guest = InetAddress.ofLiteral("127.0.0.2");
        try (DnsDatagramRelay only = DnsDatagramRelay.listen(new InetSocketAddress(LOOPBACK, 0),
                (InetSocketAddress) stub.getLocalAddress(), HEADER, guest, strangers::add);
             DatagramSocket stranger = client();
             DatagramSocket asker = new DatagramSocket(new InetSocketAddress(guest, 0))) {
            asker.setSoTimeout(2_000);
            int port = only.port();
            stranger.send(query(0x0101, "stranger", port));
            byte[] refused = receive(stranger);
            assertThat(refused).isNotNull();
            assertThat(refused[2] & 0x80).as("an answer").isEqualTo(0x80);
            assertThat(refused[3] & 0x0f).as("REFUSED").isEqualTo(5);
            assertThat(strangers).containsExactly(LOOPBACK);
            asker.send(query(0x0202, "guest", port));
            byte[] answer = receive(asker);
            assertThat(answer).isNotNull();
            assertThat(new String(answer, StandardCharsets.US_ASCII)).contains("guest");
            assertThat(idsAtStub).as("only the guest's question reached the stub").hasSize(1);
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
