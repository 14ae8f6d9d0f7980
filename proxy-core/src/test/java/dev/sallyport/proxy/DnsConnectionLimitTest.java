package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Limits;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.Await;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The DNS stub's TCP listener on loopback, from the attacker's side: one client (127.0.0.2) holding the default
 * {@code max_connections_per_client} (1,024) DNS-over-TCP connections gets its next one closed unanswered, audited
 * and counted as the main listener's refusals are, while another client (127.0.0.3) is answered; the slots come
 * back when the connections close. A connection fed one byte at a time, never a whole query, is closed all the same.
 */
class DnsConnectionLimitTest {

    static final int LIMIT = Limits.DEFAULT_MAX_CONNECTIONS_PER_CLIENT;

    static Path dir;
    static ProxyFixture proxy;
    static InetSocketAddress dns;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        proxy = ProxyFixture.startWithCapture(ProxyFixture.policy(null, "", "",
                "  - name: allowed\n    hosts: [allowed.test]\n"), new MapResolver(), dir);
        dns = proxy.proxy.dnsAddress().orElseThrow();
    }

    @AfterAll
    static void stop() {
        proxy.close();
    }

    @Test
    void aClientHoldingItsConnectionLimitIsRefusedAndAuditedWhileAnotherIsAnswered() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            // each one asked once: held past that for the stub's 10 s, far longer than this loop takes
            for (int i = 0; i < LIMIT; i++) {
                Socket s = from("127.0.0.2");
                held.add(s);
                assertThat(ask(s)).as("answer on connection " + (i + 1)).isZero();
            }
            try (Socket over = from("127.0.0.2")) {
                assertThat(askOrClosed(over)).as("connection " + (LIMIT + 1) + " is closed unanswered").isEqualTo(-1);
            }
            AuditFields refused = proxy.events.await("connection",
                    f -> "client_connection_limit".equals(f.reason()) && f.client().startsWith("127.0.0.2:"));
            assertThat(refused.decision()).isEqualTo("deny");
            assertThat(proxy.events.all("connection")).as("only the one over the limit").hasSize(1);
            assertThat(counter()).isEqualTo(1.0);
            try (Socket other = from("127.0.0.3")) {
                assertThat(ask(other)).as("another client is answered").isZero();
            }
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        var active = proxy.proxy.metrics().registry().get("sallyport.connections.active").gauge();
        Await.until("every slot given back", Duration.ofSeconds(10), () -> active.value() == 0);
        try (Socket again = from("127.0.0.2")) {
            assertThat(ask(again)).as("answered again once it holds fewer").isZero();
        }
    }

    @Test
    void aConnectionFedOneByteAtATimeIsClosedAllTheSame() throws IOException {
        try (Socket s = from("127.0.0.4")) {
            assertThat(trickle(s, Duration.ofSeconds(30))).as("closed within the stub's 10 s").isLessThan(20);
        }
    }

    /**
     * A client that sends queries and never reads the answers: once they back up, the proxy stops reading it, so what
     * it can push in is bounded by the sockets' buffers (1.8 MiB here), not by the proxy's memory. Before, the
     * proxy read on (a few thousand queries a second here) and queued every answer.
     */
    @Test
    void aClientThatNeverReadsItsAnswersIsNoLongerRead() throws IOException {
        byte[] one = RelayedCaptureTest.framedQuery("allowed.test");
        ByteBuffer burst = ByteBuffer.allocate(one.length * 4096);   // about 120 KiB of whole queries
        while (burst.remaining() >= one.length) {
            burst.put(one);
        }
        burst.flip();
        long sent = 0;
        long most = 8L << 20;
        try (SocketChannel ch = SocketChannel.open(); Selector writable = Selector.open()) {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, 4096);   // its answers back up at once
            ch.setOption(StandardSocketOptions.SO_SNDBUF, 64 << 10);   // fixed: writable again as soon as some is read
            ch.bind(new InetSocketAddress("127.0.0.6", 0));
            ch.connect(dns);
            ch.configureBlocking(false);
            ch.register(writable, SelectionKey.OP_WRITE);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            // until the proxy takes nothing for 2 s (it stopped reading), or it took all that this loop sends
            while (sent < most && System.nanoTime() < deadline && writable.select(2000) > 0) {
                writable.selectedKeys().clear();
                if (!burst.hasRemaining()) {
                    burst.rewind();
                }
                sent += ch.write(burst);
            }
        }
        assertThat(sent).as("bytes of queries the proxy took while none of its answers was read")
                .isLessThan(4L << 20);
    }

    /**
     * Sends a query that claims 65,535 bytes, one byte a second, until the proxy closes {@code s}; how many seconds
     * that took (the read timeout paces the bytes: no sleep). Fails past {@code deadline}.
     */
    static long trickle(Socket s, Duration deadline) throws IOException {
        long start = System.nanoTime();
        s.setSoTimeout(1000);
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        out.write(0xff);
        while (System.nanoTime() - start < deadline.toNanos()) {
            try {
                if (in.read() < 0) {
                    return Duration.ofNanos(System.nanoTime() - start).toSeconds();
                }
            } catch (SocketTimeoutException quiet) {
                try {
                    out.write(0);
                } catch (IOException closed) {
                    return Duration.ofNanos(System.nanoTime() - start).toSeconds();
                }
            } catch (java.net.SocketException reset) {
                // closed with bytes of ours unread: the kernel answers with a reset, a close all the same
                return Duration.ofNanos(System.nanoTime() - start).toSeconds();
            }
        }
        throw new AssertionError("still open after " + deadline + " of one byte a second");
    }

    /** A connection to the stub's TCP listener from the given loopback address (a client of its own). */
    private static Socket from(String source) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(source, 0));
        s.connect(dns, 5000);
        s.setSoTimeout(5000);
        return s;
    }

    /** One A question for allowed.test: the answer's rcode. */
    private static int ask(Socket s) throws IOException {
        int rcode = askOrClosed(s);
        assertThat(rcode).as("an answer, not a close").isNotNegative();
        return rcode;
    }

    /** The rcode of the answer to one question, or -1 when the proxy closed the connection instead. */
    private static int askOrClosed(Socket s) throws IOException {
        try {
            s.getOutputStream().write(RelayedCaptureTest.framedQuery("allowed.test"));
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] answer = new byte[in.readUnsignedShort()];
            in.readFully(answer);
            return answer[3] & 0x0f;
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return -1;
        }
    }

    private static double counter() {
        return proxy.proxy.metrics().registry().get("sallyport.client.limit.refusals").tag("limit", "connections")
                .counter().count();
    }
}
