package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TestServerSockets;
import dev.sallyport.testing.Trust;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * On the wire toward an HTTP/2 upstream, a header field that holds an injected secret is sent as a literal that is
 * never indexed (RFC 7541, section 6.2.3), on every request of the connection: were it put in the HPACK table, later
 * requests on the shared connection (other clients' too) would carry it as an index, and an intermediary would be
 * allowed to index it. The upstream here is a minimal HTTP/2 server on a raw TLS socket that records each request's
 * header block as bytes and reads its representations.
 */
class Http2UpstreamHpackTest {

    static final String VALUE = "real-hpack-key-value-5be2d9c1a7";
    static final String PH = "sallyport-ph-hpackneverindexedplaceholder";

    static SSLServerSocket server;
    static Thread acceptor;
    static final List<byte[]> blocks = new CopyOnWriteArrayList<>();
    static ProxyFixture proxy;
    static String authority;

    @BeforeAll
    static void start() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        Path root = pki.rootPem(dir);
        TestPki.Issued cert = pki.issue("hpack.test");
        server = TestServerSockets.tls(cert.key(), cert.chain());
        SSLParameters params = server.getSSLParameters();
        params.setApplicationProtocols(new String[] {"h2"});
        server.setSSLParameters(params);
        acceptor = Thread.ofPlatform().daemon().name("raw-h2-upstream").start(Http2UpstreamHpackTest::accept);
        Path value = Files.writeString(dir.resolve("key"), VALUE + "\n");
        String rules = "  - name: hpack\n    hosts: [hpack.test]\n    ports: [" + server.getLocalPort() + "]\n";
        String secrets = "secrets:\n  - name: KEY\n    from: file:" + value + "\n    hosts: [hpack.test]\n"
                + "    headers: [X-Api-Key]\n    placeholder: " + PH + "\n";
        authority = "hpack.test:" + server.getLocalPort();
        proxy = ProxyFixture.start(ProxyFixture.policy(root, authority, "  http2: true\n", rules) + secrets,
                new MapResolver().map("hpack.test", "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.close();
        server.close();
    }

    @Test
    void anInjectedValueIsNeverIndexedOnAnyRequestOfTheSharedConnection() throws Exception {
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .proxy(ProxySelector.of(proxy.address())).sslContext(Trust.of(proxy.caPem).context)
                .connectTimeout(Duration.ofSeconds(5)).build()) {
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("https://" + authority
                        + "/hpack/" + i)).header("X-Api-Key", PH).header("X-Plain", "same-every-time")
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
            }
        }
        assertThat(blocks).hasSize(3);
        for (byte[] block : blocks) {
            // exactly one field is never indexed (the injected one); the plain field is indexed like any other
            assertThat(Representations.of(block).neverIndexed()).isEqualTo(1);
        }
        // the plain field went into the table on the first request and was sent as an index afterwards: the
        // connection was shared, so the injected field would have been an index too, had it been indexable
        assertThat(Representations.of(blocks.get(2)).indexedFromTable()).isPositive();
    }

    /** Counts of a header block's representations (RFC 7541, section 6). */
    record Representations(int neverIndexed, int indexedFromTable) {
        static Representations of(byte[] b) {
            int never = 0;
            int fromTable = 0;
            int[] pos = {0};
            while (pos[0] < b.length) {
                int first = b[pos[0]] & 0xff;
                if ((first & 0x80) != 0) {              // indexed field
                    if (integer(b, pos, 7) > 61) {
                        fromTable++;
                    }
                    continue;
                }
                if ((first & 0xe0) == 0x20) {           // dynamic table size update
                    integer(b, pos, 5);
                    continue;
                }
                int prefix = (first & 0x40) != 0 ? 6 : 4;
                if ((first & 0xf0) == 0x10) {
                    never++;
                }
                if (integer(b, pos, prefix) == 0) {     // a literal name follows
                    skipString(b, pos);
                }
                skipString(b, pos);
            }
            return new Representations(never, fromTable);
        }

        private static int integer(byte[] b, int[] pos, int prefixBits) {
            int max = (1 << prefixBits) - 1;
            int value = b[pos[0]++] & max;
            if (value < max) {
                return value;
            }
            int shift = 0;
            int next;
            do {
                next = b[pos[0]++] & 0xff;
                value += (next & 0x7f) << shift;
                shift += 7;
            } while ((next & 0x80) != 0);
            return value;
        }

        private static void skipString(byte[] b, int[] pos) {
            pos[0] += integer(b, pos, 7);
        }
    }

    // ---- a minimal HTTP/2 server: SETTINGS, and a 200 that ends the stream for each request ----

    static void accept() {
        while (!server.isClosed()) {
            try {
                SSLSocket socket = (SSLSocket) server.accept();
                Thread.ofVirtual().start(() -> serve(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    static void serve(SSLSocket socket) {
        try (socket) {
            socket.setSoTimeout(20_000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            in.readFully(new byte[24]);                             // the client's preface
            frame(out, 0x4, 0, 0, new byte[0]);                     // our SETTINGS
            while (true) {
                int length = in.readUnsignedByte() << 16 | in.readUnsignedShort();
                int type = in.readUnsignedByte();
                int flags = in.readUnsignedByte();
                int stream = in.readInt() & 0x7fffffff;
                byte[] payload = new byte[length];
                in.readFully(payload);
                if (type == 0x4 && (flags & 0x1) == 0) {
                    frame(out, 0x4, 0x1, 0, new byte[0]);           // SETTINGS ACK
                } else if (type == 0x1) {                           // HEADERS: END_HEADERS expected (small blocks)
                    int start = (flags & 0x8) != 0 ? 1 : 0;
                    int end = payload.length - ((flags & 0x8) != 0 ? payload[0] & 0xff : 0);
                    if ((flags & 0x20) != 0) {
                        start += 5;                                 // priority fields
                    }
                    blocks.add(Arrays.copyOfRange(payload, start, end));
                    frame(out, 0x1, 0x5, stream, new byte[] {(byte) 0x88});   // :status 200, END_STREAM
                } else if (type == 0x6 && (flags & 0x1) == 0) {
                    frame(out, 0x6, 0x1, 0, payload);               // PING ACK
                } else if (type == 0x7) {
                    return;                                         // GOAWAY
                }
            }
        } catch (IOException e) {
            // the proxy closed the connection: the test's assertions say whether that was early
        }
    }

    static void frame(OutputStream out, int type, int flags, int stream, byte[] payload) throws IOException {
        byte[] head = {(byte) (payload.length >> 16), (byte) (payload.length >> 8), (byte) payload.length,
            (byte) type, (byte) flags, (byte) (stream >> 24), (byte) (stream >> 16), (byte) (stream >> 8),
            (byte) stream};
        synchronized (out) {
            out.write(head);
            out.write(payload);
            out.flush();
        }
    }
}
