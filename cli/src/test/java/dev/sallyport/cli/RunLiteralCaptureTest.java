package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code network.literal_addresses: capture} in {@code sallyport run} (process backend), from the attacker's side: a
 * client with the environment cleared connects to IP addresses it was never given by the DNS stub. The run (the CLI,
 * its proxy and a TLS server) lives in a network namespace this test creates, where {@code 192.0.2.10} and
 * {@code .11} sit on the loopback: as root a plain network namespace, as a normal user one of its own user
 * namespace (mapped to itself; the CLI runs without the namespace's capabilities). With the setting, {@code curl}
 * to {@code https://192.0.2.10:8443/} (a {@code cidrs} rule and {@code allow_private}) is intercepted and served;
 * {@code .11} (the same rule, but in {@code network.deny}), an address no rule names, another port of the same
 * address (a service of the host) and IPv6 forms that embed loopback are refused by the proxy and audited as
 * transparent; the sandbox's own loopback stays its own. Without it nothing changes: no route, no record.
 */
class RunLiteralCaptureTest {
    private static final String ALLOWED = "192.0.2.10";
    private static final String DENIED_BY_NETWORK = "192.0.2.11";
    private static final String NO_RULE = "198.51.100.7";
    private static final int TLS_PORT = 8443;
    private static final int SERVICE_PORT = 8081;
    private static final String BODY = "hello from a literal address";
    private static final String SERVER = """
            import signal, socket, ssl, sys, threading
            signal.alarm(300)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(sys.argv[1], sys.argv[2])
            def listen(port):
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("0.0.0.0", port)); s.listen(16); return s
            tls, service = listen(%d), listen(%d)
            def banner():
                while True:
                    c, _ = service.accept(); c.sendall(b"host-service\\n"); c.close()
            threading.Thread(target=banner, daemon=True).start()
            with open(sys.argv[3], "w") as ready: ready.write("ready\\n")
            while True:
                c, _ = tls.accept()
                try:
                    s = ctx.wrap_socket(c, server_side=True); s.settimeout(10); head = b""
                    while b"\\r\\n\\r\\n" not in head:
                        more = s.recv(4096)
                        if not more: break
                        head += more
                    body = b"%s\\n"
                    s.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %%d\\r\\nConnection: close\\r\\n\\r\\n" %% len(body) + body)
                    s.close()
                except (OSError, ssl.SSLError):
                    c.close()
            """.formatted(TLS_PORT, SERVICE_PORT, BODY);
    /** $1 the server script, $2 its certificate, $3 its key, $4 a fifo; then the CLI's command line. */
    private static final String NETWORK = "ip link set lo up && ip addr add " + ALLOWED + "/32 dev lo"
            + " && ip addr add " + DENIED_BY_NETWORK + "/32 dev lo || exit 97;"
            + " python3 -c \"$1\" \"$2\" \"$3\" \"$4\" & server=$!; read ready < \"$4\";"
            + " [ \"$ready\" = ready ] || exit 98; shift 4; %s \"$@\"; status=$?; kill $server; exit $status";

    @TempDir
    Path dir;

    @BeforeEach
    void requirements() {
        for (String tool : List.of("unshare", "ip", "nft", "python3", "curl", "setpriv")) {
            Prerequisites.require(tool, ExternalProcess.run(Duration.ofSeconds(10), List.of("sh", "-c",
                    "command -v " + tool), null).exit() == 0, tool + " (scripts/install-deps.sh installs it)");
        }
    }

    @Test
    void withTheSettingALiteralAddressIsDecidedAsAnIpLiteralConnect() throws IOException {
        String script = "env -i /usr/bin/curl -fsS -m 20 --noproxy '*' --cacert /etc/ssl/certs/ca-certificates.crt"
                + " https://" + ALLOWED + ":" + TLS_PORT + "/literal; echo curl=$?; " + probes();
        ExternalProcess.Result r = run("  literal_addresses: capture\n", script);
        assertThat(r.stdout()).as(r.stderr()).contains(BODY + "\ncurl=0")
                .contains("network-denied=403").contains("host-service=403").contains("no-rule=closed")
                .contains("own-loopback=refused").contains("compat-loopback=closed")
                .doesNotContain("host-service\n");
        String audit = Files.readString(dir.resolve("audit.jsonl"));
        assertThat(audit.lines().filter(l -> l.contains("\"path\":\"/literal\"")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\"")
                        .contains("\"decision\":\"allow\"").contains("\"host\":\"" + ALLOWED + "\""));
        // As for a CONNECT: the rule opens the tunnel, network.deny refuses the dial of each request.
        for (String refused : List.of("\"host\":\"" + DENIED_BY_NETWORK + "\"", "\"host\":\"" + NO_RULE + "\"",
                "\"host\":\"" + ALLOWED + "\",\"port\":" + SERVICE_PORT)) {
            assertThat(audit.lines().filter(l -> l.contains(refused))).as(refused)
                    .allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""))
                    .anySatisfy(l -> assertThat(l).contains("\"decision\":\"deny\""));
        }
        assertThat(audit).containsPattern("\"host\":\"[0:]+:7f00:1\"");
    }

    @Test
    void withoutItALiteralAddressHasNoRoute() throws IOException {
        ExternalProcess.Result r = run("", "env -i /usr/bin/curl -sS -m 20 --noproxy '*' https://" + ALLOWED + ":"
                + TLS_PORT + "/literal; echo curl=$?; " + probes());
        assertThat(r.stdout()).as(r.stderr()).contains("curl=7").contains("network-denied=000")
                .contains("host-service=000").contains("no-rule=refused").contains("own-loopback=refused")
                .contains("compat-loopback=refused").doesNotContain(BODY);
        Path audit = dir.resolve("audit.jsonl");
        assertThat(Files.exists(audit) ? Files.readString(audit) : "").doesNotContain("\"host\":\"192.0.2.")
                .doesNotContain("\"host\":\"" + NO_RULE + "\"");
    }

    /**
     * Probes from inside: {@code curl} prints {@code name=STATUS} ({@code 000}: no connection); the TCP probes print
     * {@code name=banner}, {@code name=closed} (connected, then closed or reset: captured and refused by the proxy) or
     * {@code name=refused} (the connect failed: no route, nothing listening).
     */
    private static String probes() {
        String curl = "env -i /usr/bin/curl -s -m 20 --noproxy '*' -o /dev/null --cacert "
                + "/etc/ssl/certs/ca-certificates.crt -w ";
        return curl + "'network-denied=%{http_code}\\n' https://" + DENIED_BY_NETWORK + ":" + TLS_PORT + "/; "
                + curl + "'host-service=%{http_code}\\n' http://" + ALLOWED + ":" + SERVICE_PORT + "/; "
                + "env -i /usr/bin/python3 -c '"
                + "import socket\n"
                + "for name, where in [(\"no-rule\", (\"" + NO_RULE + "\", " + TLS_PORT + ")),"
                + " (\"own-loopback\", (\"127.0.0.1\", " + SERVICE_PORT + ")),"
                + " (\"compat-loopback\", (\"::127.0.0.1\", " + SERVICE_PORT + "))]:\n"
                + " try:\n"
                + "  c = socket.create_connection(where, timeout=5); c.settimeout(5)\n"
                + " except OSError:\n"
                + "  print(name + \"=refused\"); continue\n"
                + " try:\n"
                + "  print(name + \"=\" + (c.recv(100).decode().strip() or \"closed\"))\n"
                + " except OSError:\n"
                + "  print(name + \"=closed\")\n'";
    }

    /**
     * {@code sallyport run} of {@code script} in the test's network namespace, the policy allowing
     * {@value #ALLOWED}:{@value #TLS_PORT} with {@code networkMore} added to its {@code network} section.
     */
    private ExternalProcess.Result run(String networkMore, String script) throws IOException {
        TestPki pki = TestPki.create();
        TestPki.Issued server = pki.issue(ALLOWED, DENIED_BY_NETWORK);
        Path policyDir = Files.createDirectories(dir.resolve("policy"));
        Path policy = Files.writeString(policyDir.resolve("policy.yaml"), """
                upstream:
                  trust: [%s]
                network:
                  deny: default
                  allow_private: ["%s:%d"]
                %srules:
                  - name: documentation-net
                    cidrs: [192.0.2.0/24, 10.0.0.0/8]
                    ports: [%d, %d]
                """.formatted(pki.rootPem(policyDir), ALLOWED, TLS_PORT, networkMore, TLS_PORT, SERVICE_PORT));
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path fifo = dir.resolve("ready");
        assertThat(ExternalProcess.run(Duration.ofSeconds(10), List.of("mkfifo", fifo.toString()), null).exit())
                .isZero();
        List<String> argv = new ArrayList<>();
        String launch;
        if (Prerequisites.isRoot()) {
            argv.addAll(List.of("unshare", "--net"));
            launch = "";
        } else {
            // The namespace's capabilities only for ip: the CLI runs as the user it is, with none.
            argv.addAll(List.of("unshare", "--user", "--map-current-user", "--net", "--keep-caps"));
            launch = "setpriv --inh-caps=-all --ambient-caps=-all --";
        }
        argv.addAll(List.of("sh", "-c", NETWORK.formatted(launch), "sallyport-literal-test", SERVER,
                server.writeCertPem(dir).toString(), server.writeKeyPem(dir).toString(), fifo.toString()));
        argv.addAll(CliProcess.command("run", "--policy", policy.toString(), "--workdir", workspace.toString(),
                "--audit", dir.resolve("audit.jsonl").toString(), "--", "sh", "-c", script));
        return ExternalProcess.run(ToolRun.TIMEOUT, argv, null, Map.of("SALLYPORT_HOME", dir.resolve("state")
                .toString()));
    }
}
