package dev.sallyport.image;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The image Jib built (target/sallyport-image.tar, an OCI layout) run for real: copied by skopeo, unpacked by umoci,
 * started by runc with a read-only root, no capabilities at all, its own user (65532), the policy mounted read-only,
 * the state directory and /tmp as volumes. It answers {@code /readyz}, denies by default, writes the audit log to
 * stdout as JSON Lines, and stops cleanly on SIGTERM. The JVM must use the AOT cache trained at build time.
 */
class ImageRunTest {

    static final Path TAR = Path.of("target/sallyport-image.tar");
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theImageRunsUnderRuncReadOnlyWithoutCapabilitiesAndDeniesByDefault() throws Exception {
        Prerequisites.requireRoot("runc with a bundle of its own, as CI runs it");
        for (String tool : List.of("runc", "umoci", "skopeo")) {
            Prerequisites.require(tool, onPath(tool), "apt-get install " + tool + " (scripts/install-deps.sh does)");
        }
        assertThat(TAR).as("built by Jib before the tests").exists();
        Path work = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "run-");
        run("skopeo", "copy", "-q", "oci-archive:" + TAR, "oci:" + work.resolve("oci") + ":sallyport");
        Path bundle = work.resolve("bundle");
        run("umoci", "unpack", "--image", work.resolve("oci") + ":sallyport", bundle.toString());

        int port = freePort();
        int admin = freePort();
        Path policy = Files.createDirectories(work.resolve("policy"));
        Files.writeString(policy.resolve("policy.yaml"), "proxy:\n  listen: 127.0.0.1:" + port + "\n  admin: 127.0.0.1:"
                + admin + "\naudit:\n  path: '-'\nrules: []\n");
        Path state = Files.createDirectories(work.resolve("state"));
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
        run("chown", "65532:65532", state.toString());

        ObjectNode config = (ObjectNode) JSON.readTree(bundle.resolve("config.json").toFile());
        ObjectNode process = (ObjectNode) config.get("process");
        assertThat(process.get("user").get("uid").asInt()).as("the image's own user").isEqualTo(65532);
        assertThat(process.get("args").toString()).contains("\"proxy\"", "/etc/sallyport/policy.yaml");
        process.put("terminal", false);
        // the start-up cache trained at build time must be usable: AOTMode=on makes the JVM refuse to start if not
        ArrayNode env = JSON.createArrayNode();
        process.get("env").forEach(e -> env.add(e.asText().startsWith("JDK_JAVA_OPTIONS=")
                ? e.asText() + " -XX:AOTMode=on" : e.asText()));
        assertThat(env.toString()).contains("JDK_JAVA_OPTIONS=-Xmx128m -XX:AOTMode=on");
        process.set("env", env);
        ObjectNode none = JSON.createObjectNode();
        for (String set : List.of("bounding", "effective", "inheritable", "permitted", "ambient")) {
            none.putArray(set);
        }
        process.set("capabilities", none);
        ((ObjectNode) config.get("root")).put("readonly", true);
        // the host's network namespace, so that the test reaches the listeners on loopback only
        ArrayNode namespaces = JSON.createArrayNode();
        config.get("linux").get("namespaces").forEach(n -> {
            if (!n.get("type").asText().equals("network")) {
                namespaces.add(n);
            }
        });
        ((ObjectNode) config.get("linux")).set("namespaces", namespaces);
        ArrayNode mounts = JSON.createArrayNode();
        config.get("mounts").forEach(m -> {
            String to = m.get("destination").asText();
            if (!to.equals("/tmp") && !to.equals("/var/lib/sallyport")) {
                mounts.add(m);
            }
        });
        // as a Kubernetes emptyDir and the state volume: writable, outside the read-only root
        mounts.add(mount("/tmp", "tmpfs", "tmpfs", "nosuid", "nodev", "mode=1777", "size=64m"));
        mounts.add(mount("/var/lib/sallyport", "bind", state.toString(), "rbind", "rw"));
        mounts.add(mount("/etc/sallyport", "bind", policy.toString(), "rbind", "ro"));
        config.set("mounts", mounts);
        JSON.writeValue(bundle.resolve("config.json").toFile(), config);

        String id = "sallyport-image-test-" + ProcessHandle.current().pid();
        Path out = work.resolve("stdout");
        Path err = work.resolve("stderr");
        Process runc = new ProcessBuilder("runc", "run", "--bundle", bundle.toString(), id)
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            Await.until("/readyz answers 200 (stderr: " + err + ")", Duration.ofSeconds(60), () -> {
                assertThat(runc.isAlive()).as("runc still running: " + read(err)).isTrue();
                return status(client, "http://127.0.0.1:" + admin + "/readyz") == 200;
            });
            long pid = JSON.readTree(run("runc", "state", id)).get("pid").asLong();
            String status = Files.readString(Path.of("/proc/" + pid + "/status"));
            assertThat(status).containsPattern("Uid:\\s+65532\\s+65532\\s+65532\\s+65532")
                    .contains("CapEff:\t0000000000000000").contains("CapBnd:\t0000000000000000")
                    .contains("NoNewPrivs:\t1");
            String root = Files.readAllLines(Path.of("/proc/" + pid + "/mountinfo")).stream()
                    .filter(l -> l.split(" ")[4].equals("/")).findFirst().orElseThrow();
            assertThat(root.split(" ")[5]).as("the root's mount options").startsWith("ro");

            HttpClient proxied = HttpClient.newBuilder().proxy(java.net.ProxySelector.of(
                    new java.net.InetSocketAddress("127.0.0.1", port))).build();
            HttpResponse<String> denied = proxied.send(HttpRequest.newBuilder(URI.create("http://example.test/x"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(denied.statusCode()).isEqualTo(403);
            assertThat(denied.headers().firstValue("X-Sallyport-Reason")).hasValue("no_matching_rule");
            JsonNode record = Await.value("the denial's audit record on stdout", Duration.ofSeconds(10), () ->
                    read(out).lines().map(ImageRunTest::parse).filter(r -> r != null
                            && "example.test".equals(r.path("host").asText())).findFirst().orElse(null));
            assertThat(record.get("decision").asText()).isEqualTo("deny");

            run("runc", "kill", id, "TERM");
            assertThat(runc.waitFor(30, TimeUnit.SECONDS)).as("stopped on SIGTERM").isTrue();
            // the JVM's own exit status after SIGTERM, once its shutdown hook (the proxy's close) ran
            assertThat(runc.exitValue()).as(read(err)).isEqualTo(128 + 15);
            assertThat(read(out)).contains("\"at\":\"close\"");   // the audit log's closing checkpoint
        } finally {
            runc.destroy();
            ExternalProcess.run(Duration.ofSeconds(20), List.of("runc", "delete", "--force", id), null);
        }
    }

    static ObjectNode mount(String to, String type, String source, String... options) {
        ObjectNode m = JSON.createObjectNode().put("destination", to).put("type", type).put("source", source);
        ArrayNode o = m.putArray("options");
        for (String option : options) {
            o.add(option);
        }
        return m;
    }

    static String run(String... command) {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(120), List.of(command), null);
        assertThat(r.exit()).as(String.join(" ", command) + ": " + r.stderr()).isZero();
        return r.stdout();
    }

    static int status(HttpClient client, String url) {
        try {
            return client.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    static JsonNode parse(String line) {
        try {
            return line.startsWith("{") ? JSON.readTree(line) : null;
        } catch (IOException e) {
            return null;
        }
    }

    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(" + e.getMessage() + ")";
        }
    }

    static boolean onPath(String tool) {
        return ExternalProcess.run(Duration.ofSeconds(10), List.of("sh", "-c", "command -v " + tool), null).exit() == 0;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
