package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The proxy runs out of file descriptors: its own JVM, its soft RLIMIT_NOFILE lowered (prlimit) to a few above
 * what it holds once started, then driven past it by loopback clients. It must not spin on the accept it cannot
 * complete, must keep its listener, must answer a request it cannot dial upstream for with an error (and audit it),
 * and must serve again once the clients let go. Both transports: epoll is edge-triggered (a failed accept is not
 * reported again until another connection arrives), NIO's selector is level-triggered (it reports the waiting
 * connection at once, every time: the listener would spin without its pause).
 */
class FileDescriptorsExhaustedTest {

    private static final Pattern LISTENING = Pattern.compile("proxy listening on 127\\.0\\.0\\.1:(\\d+)");
    /** Descriptors the proxy may open above what it holds at rest: a few clients, then none. */
    private static final int HEADROOM = 24;
    /** Clients opened against the lowered limit: far more than it leaves room for, far fewer than the backlog. */
    private static final int CLIENTS = 200;
    private static final Duration WINDOW = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"epoll", "nio"})
    void refusesWithoutSpinningAuditsAndServesAgainWhenDescriptorsFree(String transport) throws Exception {
        HttpServer upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        upstream.createContext("/", exchange -> {
            byte[] body = "upstream-ok".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        upstream.start();
        Path policy = dir.resolve("p.yaml");
        Path audit = dir.resolve("audit.jsonl");
        int upstreamPort = upstream.getAddress().getPort();
        Files.writeString(policy, """
                proxy:
                  listen: 127.0.0.1:0
                  admin: 127.0.0.1:0
                audit: {path: %s}
                network:
                  deny: default
                  allow_private: ["127.0.0.1:%d"]
                rules:
                  - name: loopback
                    cidrs: [127.0.0.1/32]
                    ports: [%d]
                """.formatted(audit, upstreamPort, upstreamPort));
        List<String> jvm = transport.equals("nio") ? List.of("-Dio.netty.transport.noNative=true") : List.of();
        ProcessBuilder builder = new ProcessBuilder(CliProcess.command(jvm, "proxy", "--config",
                policy.toString()));
        builder.environment().put("SALLYPORT_HOME", dir.resolve("state").toString());
        Process process = builder.start();
        List<String> stderr = new CopyOnWriteArrayList<>();
        List<Socket> clients = new ArrayList<>();
        try {
            int port = listeningPort(process, stderr);
            assertThat(stderr).anyMatch(line -> line.contains("transport=" + transport));
            String url = "http://127.0.0.1:" + upstreamPort + "/";
            assertThat(get(port, url + "before")).startsWith("HTTP/1.1 200");

            long pid = process.pid();
            int atRest = openDescriptors(pid);
            int limit = atRest + HEADROOM;
            ExternalProcess.Result lowered = ExternalProcess.run(Duration.ofSeconds(10),
                    List.of("prlimit", "--pid", Long.toString(pid), "--nofile=" + limit + ":"), null);
            assertThat(lowered.exit()).as(lowered.stderr()).isZero();

            for (int i = 0; i < CLIENTS; i++) {
                clients.add(new Socket(InetAddress.getLoopbackAddress(), port));
            }
            Await.until("the proxy holds its lowered limit of " + limit + " descriptors", Duration.ofSeconds(30),
                    () -> openDescriptors(pid) >= limit);

            long cpu = cpuTicks(pid);
            long started = System.nanoTime();
            Await.until("a window of " + WINDOW.toMillis() + " ms at the limit", WINDOW.plusSeconds(5),
                    () -> System.nanoTime() - started >= WINDOW.toNanos());
            long spent = cpuTicks(pid) - cpu;
            long window = ticks(Duration.ofNanos(System.nanoTime() - started));
            assertThat(spent).as("CPU ticks the proxy spent in %d ticks at its descriptor limit (a spinning accept "
                    + "loop spends them all)", window).isLessThan(window / 4);

            // an accepted client whose request needs one more descriptor (the upstream socket) gets an answer
            String refused = request(clients.getFirst(), url + "during");
            assertThat(refused).as("a request the proxy cannot dial for").matches("(?s)HTTP/1\\.1 5\\d\\d .*");

            for (Socket client : clients) {
                client.close();
            }
            clients.clear();
            String after = Await.value("a new request served once the clients let go", Duration.ofSeconds(30),
                    () -> {
                        String status = get(port, url + "after");
                        return status.startsWith("HTTP/1.1 200") ? status : null;
                    });
            assertThat(after).contains("upstream-ok");
            assertThat(stderr).as("what the proxy logged about its listener: a line when it paused and when it "
                    + "accepted again, not a line (nor a stack trace) per failed accept")
                    .anyMatch(line -> line.contains("listener cannot accept, pausing it")
                            && line.contains("Too many open files"))
                    .anyMatch(line -> line.contains("listener accepting again"))
                    .noneMatch(line -> line.startsWith("\tat "))
                    .filteredOn(line -> line.contains("listener cannot accept")).hasSizeLessThan(10);

            process.destroy(); // SIGTERM: the audit log is flushed and closed
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
            String log = Files.readString(audit);
            assertThat(log).contains("/before\"", "/after\"");
            assertThat(log.lines().filter(line -> line.contains("/during\"") && line.contains("\"status\"")))
                    .as("the refused request's end record").singleElement().asString()
                    .contains("\"status\":502", "\"reason\":\"upstream_connect_failed\"");
        } finally {
            for (Socket client : clients) {
                client.close();
            }
            process.destroyForcibly();
            upstream.stop(0);
        }
    }

    private static int listeningPort(Process process, List<String> lines) throws Exception {
        BufferedReader stderr = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8));
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                for (String line; (line = stderr.readLine()) != null; ) {
                    lines.add(line);
                    Matcher found = LISTENING.matcher(line);
                    if (found.find()) {
                        port.complete(Integer.parseInt(found.group(1)));
                    }
                }
                port.completeExceptionally(new IllegalStateException("the proxy ended: " + lines));
            } catch (IOException e) {
                port.completeExceptionally(e);
            }
        });
        return port.get(60, TimeUnit.SECONDS);
    }

    /** A GET through the proxy on a new connection: the whole reply, or what came before an error. */
    private static String get(int port, String url) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return request(socket, url);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static String request(Socket socket, String url) throws IOException {
        socket.setSoTimeout(20_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + url + " HTTP/1.1\r\nHost: " + java.net.URI.create(url).getAuthority()
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    private static int openDescriptors(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return (int) fds.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** User and system time of the process, in clock ticks (fields 14 and 15 of /proc/PID/stat). */
    private static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private static long ticks(Duration duration) {
        return duration.toMillis() * TICKS_PER_SECOND / 1000;
    }

    private static final long TICKS_PER_SECOND = ticksPerSecond();

    private static long ticksPerSecond() {
        ExternalProcess.Result clk = ExternalProcess.run(Duration.ofSeconds(10), List.of("getconf", "CLK_TCK"), null,
                Map.of());
        return Long.parseLong(clk.stdout().strip());
    }
}
