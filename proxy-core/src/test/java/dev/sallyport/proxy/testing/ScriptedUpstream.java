package dev.sallyport.proxy.testing;

import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TestServerSockets;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLServerSocket;

/**
 * A TLS upstream on loopback that misbehaves exactly as a test says: each connection reads one request head and
 * hands the raw streams to a {@link Script}, which writes byte-exact answers (a {@code 101} and frames in one write,
 * fragments of its own choosing). Sockets time out after 10 s; what a script throws is kept in {@link #failures}.
 */
public final class ScriptedUpstream implements AutoCloseable {

    /** What the upstream does on one connection after reading the request head. */
    @FunctionalInterface
    public interface Script {
        void run(Connection connection) throws Exception;
    }

    /** One accepted connection: the request head (CRLF-separated, without the blank line) and the raw streams. */
    public record Connection(String head, InputStream in, OutputStream out) {

        /** Writes all parts with one {@code write} call (one TLS record, one segment on loopback) and flushes. */
        public void writeAtOnce(byte[]... parts) throws IOException {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (byte[] p : parts) {
                all.write(p);
            }
            out.write(all.toByteArray());
            out.flush();
        }

        /** The value of request header {@code name} (case-insensitive), or null. */
        public String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    private final SSLServerSocket server;
    private final Script script;
    public final List<String> heads = new CopyOnWriteArrayList<>();
    public final List<Throwable> failures = new CopyOnWriteArrayList<>();

    private ScriptedUpstream(SSLServerSocket server, Script script) {
        this.server = server;
        this.script = script;
        Thread.ofPlatform().daemon().name("scripted-upstream-" + server.getLocalPort()).start(this::acceptLoop);
    }

    public static ScriptedUpstream https(TestPki.Issued cert, Script script) {
        return new ScriptedUpstream(TestServerSockets.tls(cert.key(), cert.chain()), script);
    }

    public int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return;
            }
            Thread.ofVirtual().start(() -> serve(s));
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(10_000);
            String head = readHead(s.getInputStream());
            heads.add(head);
            script.run(new Connection(head, s.getInputStream(), s.getOutputStream()));
        } catch (Exception e) {
            failures.add(e);
        }
    }

    /** Reads up to the blank line that ends a head (at most 64 KiB); the head without it. */
    public static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0 || head.size() > 64 * 1024) {
                throw new IOException("no complete head (read " + head.size() + " bytes)");
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        return text.substring(0, text.length() - 4);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
