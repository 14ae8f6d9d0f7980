package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TestServerSockets;
import dev.sallyport.testing.tools.GitHttpBackend;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} with a real {@code git clone} over HTTPS inside the process sandbox, the token given as a
 * secret: git sees only the placeholder (in its URL, as {@code x-access-token:$GIT_TOKEN}), the run's proxy
 * decodes the {@code Authorization: Basic} credential, swaps the real token in and encodes it again, and the
 * loopback git server (the JDK's {@link HttpsServer} serving a bare repository by git's "dumb" HTTP protocol)
 * accepts only the real token.
 *
 * <p>Two things the test does on purpose. The sandbox's {@code NO_PROXY} names {@code 127.0.0.1} (so a tool
 * talking to the sandbox's own loopback is not sent to the proxy), and git's libcurl honours it even with
 * {@code http.proxy} set; the loopback server stands in for a remote host here, so the git command runs with
 * {@code NO_PROXY} and {@code no_proxy} empty. And git (libcurl with {@code CURLAUTH_ANY}) sends no credential
 * on its first request: it waits for the {@code 401} and its {@code WWW-Authenticate: Basic} challenge, which
 * the server gives, so the server also records requests without {@code Authorization}.
 */
class RunGitCloneTest {

    private static final String REPO = "/repo.git/";

    @TempDir
    Path dir;

    @Test
    void gitClonesThroughTheProxyWithAPlaceholderAndTheServerGetsOnlyTheRealToken() throws Exception {
        String token = "ghs_" + HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(16));
        Path bare = GitHttpBackend.bareRepository(dir, "repo", Map.of("README", "cloned through sallyport\n"),
                "the only commit");
        GitHttpBackend.git(bare, "update-server-info");
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        Queue<String> authorizations = new ConcurrentLinkedQueue<>();
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(TestServerSockets.serverContext(leaf.key(), leaf.chain())));
        String expected = "Basic " + base64("x-access-token:" + token);
        server.createContext("/", exchange -> serve(exchange, bare, expected, authorizations));
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            server.setExecutor(executor);
            server.start();
            try {
                cloneThroughSallyport(server.getAddress().getPort(), pki, token, authorizations);
            } finally {
                server.stop(0);
            }
        }
    }

    private void cloneThroughSallyport(int port, TestPki pki, String token, Queue<String> authorizations)
            throws IOException {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path audit = dir.resolve("audit.jsonl");
        Path policy = dir.resolve("p.yaml");
        Files.writeString(policy, CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), port, "local-git", """
                    methods: [GET]
                secrets:
                  - name: GIT_TOKEN
                    from: env:GIT_TOKEN
                    hosts: [127.0.0.1]
                    headers: [Authorization]
                """));
        String script = String.join(" && ",
                "printf %s \"$GIT_TOKEN\" > placeholder.txt",
                "NO_PROXY= no_proxy= git -c credential.helper= -c http.proxy=\"$HTTPS_PROXY\" clone --no-progress"
                        + " \"https://x-access-token:$GIT_TOKEN@127.0.0.1:" + port + REPO + "\" clone",
                "git -C clone log --format=%s > log.txt");
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString(),
                        "GIT_TOKEN", token), Duration.ofSeconds(180), "run", "--policy", policy.toString(),
                "--workdir", workspace.toString(), "--audit", audit.toString(), "--", "sh", "-c", script);

        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(Files.readString(workspace.resolve("log.txt"))).isEqualTo("the only commit\n");
        assertThat(workspace.resolve("clone/README")).hasContent("cloned through sallyport\n");
        String placeholder = Files.readString(workspace.resolve("placeholder.txt"));
        assertThat(placeholder).matches("sallyport-ph-[a-z2-7]{26}");
        List<String> received = new ArrayList<>(authorizations);
        assertThat(received).as("Authorization values the git server received")
                .contains("Basic " + base64("x-access-token:" + token))
                .noneMatch(a -> a.contains(placeholder) || decodedBasic(a).contains(placeholder))
                .allMatch(a -> a.isEmpty() || a.equals("Basic " + base64("x-access-token:" + token)));
        String log = Files.readString(audit);
        assertThat(log).contains("\"secrets\":[\"GIT_TOKEN\"]").contains("\"rule\":\"local-git\"");
        for (String captured : List.of(run.stdout(), run.stderr(), log)) {
            assertThat(captured).doesNotContain(token).doesNotContain(base64("x-access-token:" + token));
        }
    }

    /** GET only, files under the bare repository only; 401 with a Basic challenge unless the real token came. */
    private static void serve(HttpExchange exchange, Path bare, String expected, Queue<String> authorizations)
            throws IOException {
        try (exchange) {
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            authorizations.add(authorization == null ? "" : authorization);
            if (!"GET".equals(exchange.getRequestMethod())) {
                send(exchange, 405, new byte[0]);
                return;
            }
            if (!expected.equals(authorization)) {
                exchange.getResponseHeaders().add("WWW-Authenticate", "Basic realm=\"git\"");
                send(exchange, 401, new byte[0]);
                return;
            }
            String path = exchange.getRequestURI().getPath();
            Path file = path.startsWith(REPO) ? bare.resolve(path.substring(REPO.length())).normalize() : null;
            if (file == null || path.contains("..") || !file.startsWith(bare) || !Files.isRegularFile(file)) {
                send(exchange, 404, new byte[0]);
                return;
            }
            exchange.getResponseHeaders().add("Content-Type", "application/octet-stream");
            send(exchange, 200, Files.readAllBytes(file));
        }
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static String base64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String decodedBasic(String authorization) {
        if (!authorization.startsWith("Basic ")) {
            return "";
        }
        try {
            return new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return "";
        }
    }
}
