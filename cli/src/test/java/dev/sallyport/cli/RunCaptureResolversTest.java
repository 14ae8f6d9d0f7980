package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transparent capture with resolvers other than glibc's, each in a program that never reads the proxy variables
 * and runs under {@code env -i}: a static Go binary (Go's own resolver reading {@code /etc/resolv.conf} and its own
 * HTTP transport and certificate pool) and a static musl program ({@code getaddrinfo} of musl, which asks for
 * {@code A} and {@code AAAA} at once, then plain HTTP on the socket it connected). Both are built on the host, put
 * in the workspace and run inside a real {@code sallyport run}, as root and as a normal user ({@link ToolRun}).
 */
class RunCaptureResolversTest {
    private static final String HOST = "go.example.test";
    private static final String PLAIN = "plain.example.test";
    private static final String GO_PROGRAM = """
            package main

            import (
            \t"fmt"
            \t"io"
            \t"net/http"
            \t"os"
            )

            func main() {
            \t// No proxy, whatever the environment says: the transport dials the name itself.
            \tclient := &http.Client{Transport: &http.Transport{Proxy: nil}}
            \tfor _, url := range os.Args[1:] {
            \t\tresponse, err := client.Get(url)
            \t\tif err != nil {
            \t\t\tfmt.Printf("error %s\\n", err)
            \t\t\tcontinue
            \t\t}
            \t\tbody, _ := io.ReadAll(response.Body)
            \t\tresponse.Body.Close()
            \t\tfmt.Printf("%d %s", response.StatusCode, body)
            \t}
            }
            """;
    private static final String MUSL_PROGRAM = """
            #include <netdb.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/socket.h>
            #include <unistd.h>
            #include <arpa/inet.h>

            int main(int argc, char **argv) {
                struct addrinfo hints = {0}, *found;
                hints.ai_family = AF_INET;
                hints.ai_socktype = SOCK_STREAM;
                int gai = getaddrinfo(argv[1], argv[2], &hints, &found);
                if (gai != 0) {
                    printf("gai %s\\n", gai == EAI_NONAME ? "EAI_NONAME" : gai_strerror(gai));
                    return 2;
                }
                char text[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &((struct sockaddr_in *) found->ai_addr)->sin_addr, text, sizeof text);
                printf("address %s\\n", text);
                int s = socket(AF_INET, SOCK_STREAM, 0);
                if (connect(s, found->ai_addr, found->ai_addrlen) != 0) {
                    perror("connect");
                    return 3;
                }
                char request[512];
                int n = snprintf(request, sizeof request, "GET /musl.txt HTTP/1.1\\r\\nHost: %s:%s\\r\\n"
                        "Connection: close\\r\\n\\r\\n", argv[1], argv[2]);
                write(s, request, n);
                char answer[4096];
                ssize_t got;
                while ((got = read(s, answer, sizeof answer)) > 0) {
                    fwrite(answer, 1, got, stdout);
                }
                return 0;
            }
            """;

    @TempDir
    Path dir;

    private ToolRun tools;
    private HttpServer plain;

    @BeforeEach
    void serve() throws IOException {
        tools = new ToolRun(dir);
        tools.site(HOST).route("/", exchange -> HttpsSite.respond(exchange, 200, "hello go\n"));
        plain = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        plain.createContext("/", exchange -> {
            byte[] body = ("plain for " + exchange.getRequestURI().getPath() + "\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        plain.start();
        tools.upstream(PLAIN, plain.getAddress().getPort(), "");
    }

    @AfterEach
    void stop() {
        plain.stop(0);
        tools.close();
    }

    @Test
    void aStaticGoBinaryWithItsOwnResolverAndTransportIsCaptured() throws IOException {
        build("/usr/bin/go", "golang-go", "client.go", GO_PROGRAM, "goclient", Map.of("CGO_ENABLED", "0",
                "GOPROXY", "off", "GO111MODULE", "off", "GOCACHE", dir.resolve("gocache").toString(),
                "HOME", dir.toString()), "build");

        ExternalProcess.Result r = tools.run("", Map.of(), "env -i ./goclient " + tools.origin(HOST) + "/go.txt"
                + " https://denied.example.test/");
        assertThat(r.stdout()).as(r.stderr()).startsWith("200 hello go\n")
                .containsPattern("error .*denied\\.example\\.test.*no such host");
        String audit = tools.audit();
        assertThat(audit.lines().filter(l -> l.contains("\"path\":\"/go.txt\"")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""));
        assertThat(audit).contains("\"host\":\"denied.example.test\"").contains("\"answer\":\"NXDOMAIN\"");
    }

    @Test
    void aStaticMuslProgramResolvesThroughTheStubAndSpeaksPlainHttp() throws IOException {
        build("/usr/bin/musl-gcc", "musl-tools", "client.c", MUSL_PROGRAM, "muslclient", Map.of(), "-static", "-O1");

        int port = plain.getAddress().getPort();
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i ./muslclient " + PLAIN + " " + port
                + "; echo; env -i ./muslclient denied.example.test 80; echo denied=$?");
        assertThat(r.stdout()).as(r.stderr()).containsPattern("(?m)^address 198\\.1[89]\\.\\d+\\.\\d+$")
                .contains("HTTP/1.1 200").contains("plain for /musl.txt")
                .contains("gai EAI_NONAME\ndenied=2");
        assertThat(tools.audit().lines().filter(l -> l.contains("\"path\":\"/musl.txt\"")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\"")
                        .contains("\"tls\":\"none\""));
    }

    /** Builds {@code program} (saved as {@code file}) with {@code compiler} into the workspace as {@code name}. */
    private void build(String compiler, String pkg, String file, String program, String name, Map<String, String> env,
                       String... flags) throws IOException {
        Prerequisites.require(compiler, Files.isExecutable(Path.of(compiler)),
                "Debian's " + pkg + " builds the client (scripts/install-deps.sh installs it)");
        Path source = Files.writeString(dir.resolve(file), program);
        List<String> command = new java.util.ArrayList<>(List.of(compiler));
        command.addAll(List.of(flags));
        command.addAll(List.of("-o", tools.workspace().resolve(name).toString(), source.toString()));
        ExternalProcess.Result build = ExternalProcess.run(Duration.ofMinutes(3), command, null, env);
        assertThat(build.exit()).as(build.stderr()).isZero();
    }
}
