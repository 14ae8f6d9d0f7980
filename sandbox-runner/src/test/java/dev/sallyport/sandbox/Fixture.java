package dev.sallyport.sandbox;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Per-test world: a workspace, a fake host home with a fake SSH key, a CA made by openssl, and a stand-in
 * "proxy" (an HTTP server on the host's loopback that records what reaches it). {@link Extension} hands one to
 * each test method that takes a {@code Fixture} parameter.
 */
final class Fixture implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    final Path root;
    final Path workspace;
    final Path home;
    final byte[] caPem;
    final HttpServer proxy;
    final ConcurrentLinkedQueue<String> proxyRequests = new ConcurrentLinkedQueue<>();

    /** What a sandbox run printed, what the checks after it reported, and what enforced its limits. */
    record Run(int exit, String out, String err, List<String> notices, String limits) {}

    Fixture(Path root) throws Exception {
        this.root = root;
        this.workspace = Files.createDirectories(root.resolve("ws"));
        this.home = Files.createDirectories(root.resolve("home"));
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/id_ed25519"), "FAKE-PRIVATE-KEY\n");
        this.caPem = makeCa(root);
        this.proxy = recordingServer("hello from the proxy\n", proxyRequests);
    }

    /** An HTTP server on the host's loopback that answers {@code body} and records "METHOD URI" of each request. */
    static HttpServer recordingServer(String body, Queue<String> requests) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        server.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        return server;
    }

    SandboxSpec.Builder spec(String script) {
        return SandboxSpec.builder(List.of("/bin/sh", "-c", script), workspace, proxy.getAddress(), caPem)
                .hostHome(home).hostEnv(Map.of("TERM", "dumb", "HOST_ONLY", "host-value")).heldStore(heldStore());
    }

    /** Where runs of {@link #spec} keep what they held back. */
    Path heldStore() {
        return root.resolve("held");
    }

    /** What runs of {@link #spec} held back from the workspace. */
    Held held() {
        return Held.of(heldStore(), workspace);
    }

    Run run(SandboxSpec spec, byte[] stdin) throws Exception {
        try (RunningSandbox sandbox = ProcessSandbox.start(spec, Stdio.pipes())) {
            Process p = sandbox.process();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            try (var in = p.getOutputStream()) {
                in.write(stdin);
            } catch (IOException ignored) {
                // the command did not read its stdin
            }
            Integer exit = sandbox.waitFor(TIMEOUT).orElseThrow(() -> new AssertionError("sandbox still running after "
                    + TIMEOUT));
            return new Run(exit, out.get(10, TimeUnit.SECONDS), err.get(10, TimeUnit.SECONDS), sandbox.notices(),
                    sandbox.limitEnforcement());
        }
    }

    /** Runs a host command (no shell) in the workspace and returns its stdout; fails unless it exits 0. */
    String host(String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(workspace.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + ": still running after 60 s");
        }
        String text = out.get(10, TimeUnit.SECONDS);
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + ": exit " + p.exitValue() + ": " + text);
        }
        return text;
    }

    /** One line from a sandbox's output, for {@code CompletableFuture.supplyAsync}. */
    static String readLine(java.io.BufferedReader reader) {
        try {
            return reader.readLine();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Writes a file below the workspace, creating its folders. */
    Path write(String relative, String text) throws IOException {
        Path file = workspace.resolve(relative);
        Files.createDirectories(file.getParent());
        return Files.writeString(file, text);
    }

    /** Writes a helper script into the workspace (visible inside at the same path). */
    Path script(String name, String text) throws IOException {
        return Files.writeString(workspace.resolve(name), text);
    }

    Run run(String script) throws Exception {
        return run(spec(script).build(), new byte[0]);
    }

    private static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "<read failed: " + e + ">";
        }
    }

    private static byte[] makeCa(Path dir) throws Exception {
        Path cert = dir.resolve("ca.pem");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir.resolve("ca-key.pem").toString(), "-out",
                cert.toString(), "-days", "1", "-subj", "/CN=sallyport test CA")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("openssl req: failed (expected: a CA certificate)");
        }
        return Files.readAllBytes(cert);
    }

    @Override
    public void close() {
        proxy.stop(0);
    }

    /** A fresh {@link Fixture} in its own temporary folder for each test method that asks; closed and removed after. */
    static final class Extension implements ParameterResolver, AfterEachCallback {
        private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(Fixture.class);

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == Fixture.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            try {
                Fixture f = new Fixture(Files.createTempDirectory("sallyport-sandbox-test-"));
                context.getStore(NAMESPACE).put("fixture", f);
                return f;
            } catch (Exception e) {
                throw new ParameterResolutionException("fixture: cannot set up: " + e.getMessage(), e);
            }
        }

        @Override
        public void afterEach(ExtensionContext context) {
            Fixture f = context.getStore(NAMESPACE).remove("fixture", Fixture.class);
            if (f != null) {
                f.close();
                RunningSandbox.deleteTree(f.root);
            }
        }
    }
}
