package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plain HTTPS clients inside {@code sallyport run}, each as a user types it with nothing but what the sandbox
 * sets: curl, wget (Debian's, which trusts only the system bundle path), a Java program using the JDK's
 * {@code HttpClient} (run from source by the distribution's {@code java}), and Node's built-in {@code fetch}.
 * Each fetches one file from {@code files.example.test} through the run's proxy (see {@link ToolRun}).
 */
class RunToolsHttpTest {
    private static final String HOST = "files.example.test";
    private static final String BODY = "hello from " + HOST + "\n";

    @TempDir
    Path dir;

    private ToolRun tools;
    private HttpsSite site;

    @BeforeEach
    void serve() {
        tools = new ToolRun(dir);
        site = tools.site(HOST).route("/", exchange -> HttpsSite.respond(exchange,
                exchange.getRequestURI().getPath().equals("/hello.txt") ? 200 : 404, BODY));
    }

    @AfterEach
    void stop() {
        tools.close();
    }

    @Test
    void curlFetchesThroughTheProxy() throws IOException {
        assertFetched(tools.run("", Map.of(), "curl -fsS -o fetched.txt " + url()));
    }

    @Test
    void wgetTrustsTheSandboxBundleAtTheSystemPath() throws IOException {
        assertFetched(tools.run("", Map.of(), "wget -q -O fetched.txt " + url()));
    }

    @Test
    void aJavaProgramWithHttpClientGoesThroughTheProxy() throws IOException {
        Prerequisites.require("javac", Files.isExecutable(Path.of("/usr/bin/javac")),
                "the distribution's JDK runs the program from source (apt-get install default-jdk-headless)");
        Files.writeString(tools.workspace().resolve("Fetch.java"), """
                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;
                import java.nio.file.Path;

                public class Fetch {
                    public static void main(String[] args) throws Exception {
                        HttpResponse<Path> response = HttpClient.newHttpClient().send(
                                HttpRequest.newBuilder(URI.create(args[0])).build(),
                                HttpResponse.BodyHandlers.ofFile(Path.of("fetched.txt")));
                        if (response.statusCode() != 200) {
                            throw new IllegalStateException("status " + response.statusCode());
                        }
                    }
                }
                """);
        assertFetched(tools.run("", Map.of(), "java Fetch.java " + url()));
    }

    /**
     * Node reads the proxy variables only from 22.21 (in the 22 line) and 24.5 on, when {@code NODE_USE_ENV_PROXY}
     * (which the sandbox sets) is given; older versions dial the host themselves, and get there through transparent
     * capture (the sandbox's DNS and its captured connections): either way the fetch works, audited as
     * {@code explicit} or {@code transparent}.
     */
    @Test
    void nodeFetchReachesTheSiteWhetherOrNotItReadsTheProxyVariables() throws IOException {
        ExternalProcess.Result run = tools.run("", Map.of(), nodeFetch());
        String version = Files.readString(tools.workspace().resolve("node-version.txt")).strip();
        assertFetched(run);
        assertThat(tools.audit().lines().filter(l -> l.contains("\"path\":\"/hello.txt\"")))
                .as("Node %s's request", version).isNotEmpty().allSatisfy(l -> assertThat(l)
                        .contains("\"arrival\":\"" + (readsProxyVariables(version) ? "explicit" : "transparent")));
    }

    /**
     * With {@code --no-capture} a Node that ignores the proxy variables fails closed: there is no DNS and no way out
     * but the proxy, so the request never leaves.
     */
    @Test
    void withoutCaptureNodeThatIgnoresTheProxyVariablesFailsClosed() throws IOException {
        ExternalProcess.Result run = tools.runWith(List.of("--no-capture"), "", Map.of(), nodeFetch());
        String version = Files.readString(tools.workspace().resolve("node-version.txt")).strip();
        if (readsProxyVariables(version)) {
            assertFetched(run);
            return;
        }
        assertThat(run.exit()).as("Node %s: fetch cannot reach %s without the proxy: %s", version, HOST,
                run.stderr()).isNotZero();
        assertThat(run.stderr()).as("Node %s's error", version).contains("fetch failed");
        assertThat(tools.workspace().resolve("fetched.txt")).doesNotExist();
        assertThat(site.requests()).as("requests that reached the site").isEmpty();
        assertThat(tools.audit()).doesNotContain("\"host\":\"" + HOST + "\"");
    }

    private String nodeFetch() {
        return "node --version > node-version.txt && node -e '"
                + "fetch(process.argv[1]).then(r => r.text())"
                + ".then(t => require(\"fs\").writeFileSync(\"fetched.txt\", t))' " + url();
    }

    /** Whether Node {@code version} ({@code v22.21.0}) honours {@code NODE_USE_ENV_PROXY}: 22.21+, 24.5+, 25+. */
    static boolean readsProxyVariables(String version) {
        Matcher m = Pattern.compile("v(\\d+)\\.(\\d+)\\..*").matcher(version);
        assertThat(m.matches()).as("node --version: %s", version).isTrue();
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        return major >= 25 || (major == 24 && minor >= 5) || (major == 22 && minor >= 21);
    }

    @Test
    void theNodeVersionRuleNamesTheReleasesThatReadTheProxyVariables() {
        assertThat(readsProxyVariables("v20.20.2")).isFalse();
        assertThat(readsProxyVariables("v22.20.0")).isFalse();
        assertThat(readsProxyVariables("v22.21.0")).isTrue();
        assertThat(readsProxyVariables("v23.11.1")).isFalse();
        assertThat(readsProxyVariables("v24.4.1")).isFalse();
        assertThat(readsProxyVariables("v24.5.0")).isTrue();
        assertThat(readsProxyVariables("v25.0.0")).isTrue();
    }

    private String url() {
        return tools.origin(HOST) + "/hello.txt";
    }

    private void assertFetched(ExternalProcess.Result run) throws IOException {
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(Files.readString(tools.workspace().resolve("fetched.txt"))).isEqualTo(BODY);
        assertThat(site.requests()).extracting(HttpsSite.Request::target).containsExactly("/hello.txt");
        assertThat(tools.audit()).contains("\"host\":\"" + HOST + "\"", "\"rule\":\"" + HOST + "\"",
                "\"status\":200");
    }
}
