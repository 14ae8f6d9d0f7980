package dev.sallyport.cli;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A short run of {@code sallyport proxy --config FILE}, and of {@code sallyport run --proxy ... -- true} attached to
 * it, that trains the JDK's ahead-of-time cache (JEP 483 and 514): {@code bin/sallyport} runs it once per built jar
 * with {@code -XX:AOTCacheOutput}, and every later start loads and links the classes it used (command line, policy
 * parser, CA, metrics, BoringSSL, Netty; the run's parse, registration and sandbox set-up) from the cache instead of
 * the jar, which roughly halves the time to {@code /readyz}. The run is best effort: where no sandbox can start
 * (no bubblewrap), the cache holds what the run reached. Everything it writes (a CA, the policy, the audit log, the
 * run's workspace) lives in a temporary folder that it removes; it talks to loopback only.
 */
public final class AotTraining {

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("sallyport-aot");
        int status = 1;
        try {
            train(dir);
            status = 0;
        } catch (Exception e) {
            System.err.println("sallyport aot training: " + e.getMessage());
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (Exception ignored) {
                // best effort: a temporary folder
            }
            // always: the proxy's event loops are not daemon threads; its shutdown hook closes it
            System.exit(status);
        }
    }

    private static void train(Path dir) throws Exception {
        CertificateAuthority.init(dir.resolve("ca"), "Sallyport AOT training", KeyType.EC_P256, 1);
        int port = freePort();
        int admin = freePort();
        Path policy = dir.resolve("policy.yaml");
        Path token = dir.resolve("admin-token");
        Files.writeString(token, "aot-training-token-" + System.nanoTime());
        Files.writeString(policy, """
                proxy:
                  listen: 127.0.0.1:%d
                  admin: 127.0.0.1:%d
                  admin_token: {file: %s}
                ca: {cert: %s, key: %s}
                audit: {path: %s}
                network:
                  deny: default
                rules:
                  - name: training
                    hosts: [training.invalid]
                    methods: [GET]
                """.formatted(port, admin, token, dir.resolve("ca").resolve(CertificateAuthority.CERT_FILE),
                dir.resolve("ca").resolve(CertificateAuthority.KEY_FILE), dir.resolve("audit.jsonl")));
        PrintWriter discard = new PrintWriter(Writer.nullWriter());
        Thread.ofPlatform().daemon().name("sallyport-aot-proxy")
                .start(() -> Main.run(discard, discard, "proxy", "--config", policy.toString()));
        InetSocketAddress adminAddress = new InetSocketAddress("127.0.0.1", admin);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!exchange(adminAddress, "GET /readyz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                .startsWith("HTTP/1.1 200")) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the training proxy did not answer /readyz within 60 s");
            }
            Thread.sleep(20);
        }
        InetSocketAddress proxy = new InetSocketAddress("127.0.0.1", port);
        exchange(adminAddress, "GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        exchange(proxy, "CONNECT other.invalid:443 HTTP/1.1\r\nHost: other.invalid:443\r\n\r\n");
        exchange(proxy, "GET http://other.invalid/ HTTP/1.1\r\nHost: other.invalid\r\n\r\n");
        Path workspace = Files.createDirectories(dir.resolve("workspace"));
        Main.run(discard, discard, "run", "--proxy", "127.0.0.1:" + port, "--proxy-admin", "127.0.0.1:" + admin,
                "--proxy-token", token.toString(),
                "--ca-cert", dir.resolve("ca").resolve(CertificateAuthority.CERT_FILE).toString(),
                "--workdir", workspace.toString(), "--", "true");   // its exit status does not matter here
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Sends one request and returns the answer read until the other side closes; "" when nothing listens yet. */
    private static String exchange(InetSocketAddress to, String request) {
        try (Socket socket = new Socket()) {
            socket.connect(to, 5_000);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }
}
