package dev.sallyport.proxy.testing;

import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Squid on 127.0.0.1 as a parent proxy: {@code CONNECT} to any port, names resolved from its own hosts file
 * (every name to 127.0.0.1, never a DNS query), {@value #REFUSED} refused with 403, and, when built with a user,
 * Basic credentials required (Squid's {@code basic_ncsa_auth} over an htpasswd file). Its access log says which
 * tunnels it opened and for whom.
 */
public final class SquidParent implements AutoCloseable {

    public static final String SQUID = "/usr/sbin/squid";
    public static final String NCSA = "/usr/lib/squid/basic_ncsa_auth";
    /** A destination this parent refuses ({@code http_access deny}). */
    public static final String REFUSED = "refused.test";

    private final Process process;
    private final Path dir;
    public final int port;

    private SquidParent(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** A parent that lets anyone through (but not to {@value #REFUSED}); {@code names} resolve to 127.0.0.1. */
    public static SquidParent open(String... names) throws Exception {
        return start(null, null, names);
    }

    /** A parent that answers 407 unless {@code user}:{@code password} come as Basic credentials. */
    public static SquidParent withCredentials(String user, String password, String... names) throws Exception {
        return start(user, password, names);
    }

    private static SquidParent start(String user, String password, String... names) throws Exception {
        Prerequisites.require("squid", Files.isExecutable(Path.of(SQUID)) && Files.isExecutable(Path.of(NCSA)),
                "a real parent proxy (apt-get install squid-openssl; scripts/install-deps.sh does)");
        Path dir = Files.createTempDirectory("sallyport-squid");
        // Squid started by root runs as its own user (proxy): it must read and write here
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.writeString(dir.resolve("hosts"), "127.0.0.1 " + REFUSED + " " + String.join(" ", names) + "\n");
        String auth = "";
        if (user != null) {
            ExternalProcess.Result hash = ExternalProcess.run(Duration.ofSeconds(20),
                    List.of("openssl", "passwd", "-apr1", "-stdin"), password.getBytes(StandardCharsets.UTF_8));
            if (hash.exit() != 0) {
                throw new IllegalStateException("openssl passwd failed: " + hash.stderr());
            }
            Files.writeString(dir.resolve("passwd"), user + ":" + hash.stdout().strip() + "\n");
            auth = "auth_param basic program " + NCSA + " " + dir.resolve("passwd") + "\n"
                    + "auth_param basic realm sallyport-test\n"
                    + "acl authed proxy_auth REQUIRED\n"
                    + "http_access deny !authed\n";
        }
        for (String f : List.of("hosts", "passwd")) {
            if (Files.exists(dir.resolve(f))) {
                Files.setPosixFilePermissions(dir.resolve(f), PosixFilePermissions.fromString("rw-r--r--"));
            }
        }
        int port = freePort();
        Files.writeString(dir.resolve("squid.conf"), "http_port 127.0.0.1:" + port + "\n"
                + "visible_hostname parent.test\n"
                + "hosts_file " + dir.resolve("hosts") + "\n"
                + "dns_nameservers 127.0.0.1\n"      // a name not in the hosts file fails here, never goes out
                + "pinger_enable off\n"
                + "acl refused dstdomain " + REFUSED + "\n"
                + "http_access deny refused\n"
                + auth
                + "http_access allow all\n"
                + "cache deny all\n"
                + "access_log stdio:" + dir.resolve("access.log") + " squid\n"
                + "cache_log " + dir.resolve("cache.log") + "\n"
                + "pid_filename " + dir.resolve("squid.pid") + "\n"
                + "coredump_dir " + dir + "\n"
                + "shutdown_lifetime 0 seconds\n");
        Process process = new ProcessBuilder(SQUID, "-N", "-f", dir.resolve("squid.conf").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("squid.out").toFile()).start();
        SquidParent squid = new SquidParent(process, dir, port);
        try {
            Await.until("squid listening on 127.0.0.1:" + port, Duration.ofSeconds(30), () -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException("squid exited " + process.exitValue() + ": " + squid.output());
                }
                return accepts(port);
            });
        } catch (RuntimeException | Error e) {
            squid.close();
            throw e;
        }
        return squid;
    }

    /** The lines of Squid's access log so far (one per request or tunnel, with status and user). */
    public List<String> accessLog() {
        try {
            Path log = dir.resolve("access.log");
            return Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the access log has a line containing every one of {@code parts}, and returns it. */
    public String awaitLogged(String... parts) {
        return Await.value("squid access log line with " + String.join(", ", parts), Duration.ofSeconds(20),
                () -> accessLog().stream().filter(l -> List.of(parts).stream().allMatch(l::contains)).findFirst()
                        .orElse(null));
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    private String output() {
        try {
            return Files.readString(dir.resolve("squid.out")) + Files.readString(dir.resolve("cache.log"));
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
