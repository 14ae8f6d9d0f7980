package dev.sallyport.testing.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.sallyport.testing.ExternalProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * git's smart HTTP protocol (clone, fetch, push) for the bare repositories under one folder, the way a forge
 * serves it: each request runs {@code git http-backend} as a CGI program (RFC 3875), as the user the test runs
 * as. Push is on ({@code REMOTE_USER} is set: whoever the site let through may push). Mount it on an
 * {@link HttpsSite} route; put an authorization check in front when the test needs one.
 */
public final class GitHttpBackend implements HttpHandler {
    /** The identity of commits the fixture makes (the repositories' first commit, hooks). */
    public static final Map<String, String> FIXTURE_IDENTITY = Map.of("GIT_AUTHOR_NAME", "Sallyport Fixture",
            "GIT_AUTHOR_EMAIL", "fixture@example.test", "GIT_COMMITTER_NAME", "Sallyport Fixture",
            "GIT_COMMITTER_EMAIL", "fixture@example.test");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Path projectRoot;
    private final String mount;

    /**
     * @param projectRoot the folder holding the bare repositories ({@code NAME.git})
     * @param mount       the route prefix it is mounted on ({@code /} or {@code /git/}); the rest is the CGI path
     */
    public GitHttpBackend(Path projectRoot, String mount) {
        this.projectRoot = projectRoot.toAbsolutePath();
        this.mount = mount.endsWith("/") ? mount : mount + "/";
    }

    /**
     * Creates {@code root/NAME.git}, a bare repository whose branch {@code main} has one commit holding
     * {@code files} (path to UTF-8 content), made as {@link #FIXTURE_IDENTITY}; returns its path.
     */
    public static Path bareRepository(Path root, String name, Map<String, String> files, String message)
            throws IOException {
        Path source = Files.createDirectories(root.resolve(name + ".source"));
        for (Map.Entry<String, String> file : files.entrySet()) {
            Path path = source.resolve(file.getKey());
            Files.createDirectories(path.getParent());
            Files.writeString(path, file.getValue());
        }
        Path bare = root.resolve(name + ".git");
        git(source, "init", "-q", "-b", "main");
        git(source, "add", "-A");
        git(source, "commit", "-q", "-m", message);
        git(root, "clone", "-q", "--bare", source.toString(), bare.toString());
        return bare.toRealPath();
    }

    /** Runs git in {@code in} with the fixture's identity and no user or system configuration; fails on an error. */
    public static String git(Path in, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", in.toString()));
        command.addAll(List.of(args));
        Map<String, String> env = new HashMap<>(FIXTURE_IDENTITY);
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_CONFIG_GLOBAL", "/dev/null");
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), command, null, env);
        if (r.exit() != 0) {
            throw new IllegalStateException("git " + String.join(" ", args) + " in " + in + ": exit " + r.exit()
                    + ": " + r.stderr().strip());
        }
        return r.stdout();
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        String path = exchange.getRequestURI().getPath();
        if (!path.startsWith(mount) || path.contains("/../")) {
            HttpsSite.respond(exchange, 404, "not a repository path: " + path + "\n");
            return;
        }
        ProcessBuilder builder = new ProcessBuilder("git", "http-backend");
        Map<String, String> env = builder.environment();
        String pathEnv = env.getOrDefault("PATH", "/usr/bin:/bin");
        env.clear();
        env.putAll(FIXTURE_IDENTITY);
        env.put("PATH", pathEnv);
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_CONFIG_GLOBAL", "/dev/null");
        env.put("GIT_PROJECT_ROOT", projectRoot.toString());
        env.put("GIT_HTTP_EXPORT_ALL", "1");
        env.put("GATEWAY_INTERFACE", "CGI/1.1");
        env.put("SERVER_PROTOCOL", "HTTP/1.1");
        env.put("REQUEST_METHOD", exchange.getRequestMethod());
        env.put("PATH_INFO", path.substring(mount.length() - 1));
        env.put("QUERY_STRING", exchange.getRequestURI().getRawQuery() == null ? ""
                : exchange.getRequestURI().getRawQuery());
        env.put("REMOTE_ADDR", exchange.getRemoteAddress().getAddress().getHostAddress());
        env.put("REMOTE_USER", "sandbox");
        env.put("CONTENT_LENGTH", Integer.toString(body.length));
        copyHeader(exchange, "Content-Type", env, "CONTENT_TYPE");
        copyHeader(exchange, "Content-Encoding", env, "HTTP_CONTENT_ENCODING");
        copyHeader(exchange, "Git-Protocol", env, "GIT_PROTOCOL");
        Cgi cgi = run(builder, body);
        if (cgi.exit != 0 && cgi.stdout.length == 0) {
            HttpsSite.respond(exchange, 500, "git http-backend: exit " + cgi.exit + ": " + cgi.stderr + "\n");
            return;
        }
        answer(exchange, cgi.stdout);
    }

    private record Cgi(int exit, byte[] stdout, String stderr) {}

    private static Cgi run(ProcessBuilder builder, byte[] body) throws IOException {
        Process process = builder.start();
        CompletableFuture<Void> feed = CompletableFuture.runAsync(() -> {
            try (OutputStream in = process.getOutputStream()) {
                in.write(body);
            } catch (IOException e) {
                // the backend stopped reading (it answered an error): what it printed says why
            }
        }, Thread::startVirtualThread);
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = process.getErrorStream()) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, Thread::startVirtualThread);
        byte[] out;
        try (InputStream in = process.getInputStream()) {
            out = in.readAllBytes();
        }
        try {
            if (!process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Cgi(-1, new byte[0], "timed out after " + TIMEOUT);
            }
            feed.join();
            return new Cgi(process.exitValue(), out, new String(err.join(), StandardCharsets.UTF_8).strip());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted while git http-backend ran", e);
        }
    }

    /** Sends a CGI response: its header lines (a {@code Status:} line sets the status), a blank line, the body. */
    private static void answer(HttpExchange exchange, byte[] cgi) throws IOException {
        int status = 200;
        int at = 0;
        while (at < cgi.length) {
            int end = at;
            while (end < cgi.length && cgi[end] != '\n') {
                end++;
            }
            String line = new String(cgi, at, end - at, StandardCharsets.ISO_8859_1).strip();
            at = Math.min(end + 1, cgi.length);
            if (line.isEmpty()) {
                break;
            }
            int colon = line.indexOf(':');
            if (colon < 0) {
                HttpsSite.respond(exchange, 502, "git http-backend: not a CGI header line: " + line + "\n");
                return;
            }
            String name = line.substring(0, colon).strip();
            String value = line.substring(colon + 1).strip();
            if (name.equalsIgnoreCase("Status")) {
                status = Integer.parseInt(value.split(" ", 2)[0]);
            } else {
                exchange.getResponseHeaders().add(name, value);
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(cgi, at, cgi.length - at);
        HttpsSite.respond(exchange, status, "", body.toByteArray());
    }

    private static void copyHeader(HttpExchange exchange, String header, Map<String, String> env, String name) {
        String value = exchange.getRequestHeaders().getFirst(header);
        if (value != null) {
            env.put(name, value);
        }
    }
}
