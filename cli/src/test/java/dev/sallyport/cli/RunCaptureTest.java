package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transparent capture in {@code sallyport run} (process backend): clients that ignore the proxy variables, run with
 * the environment cleared ({@code env -i}), reach an allowed name through the sandbox's DNS (the run's proxy's stub)
 * and its captured connections, exactly as through the explicit proxy: intercepted, decided, audited
 * ({@code transparent}), secrets injected. A name no rule allows is NXDOMAIN and nothing leaves; UDP and raw sockets
 * still go nowhere. Passes as root and as a normal user (see {@link ToolRun}).
 */
class RunCaptureTest {
    private static final String HOST = "allowed.example.test";
    private static final String BODY = "hello from " + HOST + "\n";
    private static final String SECRET_VALUE = "capture-secret-value-19af2c";

    @TempDir
    Path dir;

    private ToolRun tools;
    private HttpsSite site;

    @BeforeEach
    void serve() {
        tools = new ToolRun(dir);
        site = tools.site(HOST).route("/", exchange -> HttpsSite.respond(exchange, 200, BODY));
    }

    @AfterEach
    void stop() {
        tools.close();
    }

    private String url(String path) {
        return tools.origin(HOST) + path;
    }

    @Test
    void curlWithNoProxyVariablesReachesAnAllowedName() throws IOException {
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/curl -fsS --noproxy '*' --cacert "
                + "/etc/ssl/certs/ca-certificates.crt " + url("/hello.txt"));
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(BODY);
        String audit = tools.audit();
        assertThat(audit).contains("\"event\":\"dns\"").contains("\"host\":\"" + HOST + "\"");
        assertThat(audit.lines().filter(l -> l.contains("\"path\":\"/hello.txt\"")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""));
    }

    @Test
    void opensslAndPythonReachItWithoutTheProxyVariables() throws IOException {
        int port = site.port();
        String script = "env -i /usr/bin/openssl s_client -connect " + HOST + ":" + port + " -servername " + HOST
                + " -CAfile /etc/ssl/certs/ca-certificates.crt -verify_return_error -brief < /dev/null"
                + "; echo openssl=$?; env -i /usr/bin/python3 -c '"
                + "import http.client, ssl\n"
                + "c = http.client.HTTPSConnection(\"" + HOST + "\", " + port + ", context=ssl.create_default_context("
                + "cafile=\"/etc/ssl/certs/ca-certificates.crt\"))\n"
                + "c.request(\"GET\", \"/hello.txt\")\n"
                + "print(\"python=\" + c.getresponse().read().decode().strip())\n'";
        ExternalProcess.Result r = tools.run("", Map.of(), script);
        assertThat(r.stdout()).as(r.stderr()).contains("openssl=0").contains("python=hello from " + HOST);
    }

    @Test
    void aDeniedNameIsNxdomainAndNothingIsAskedOutside() throws IOException {
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/getent ahosts denied.example.test;"
                + " echo getent=$?; env -i /usr/bin/python3 -c '"
                + "import socket\n"
                + "try:\n socket.getaddrinfo(\"" + "x".repeat(60) + ".exfil.denied.example.test\", 443)\n"
                + "except socket.gaierror as e: print(\"gai=\" + str(e.errno == socket.EAI_NONAME))\n'");
        assertThat(r.stdout()).as(r.stderr()).contains("getent=2").contains("gai=True");
        String audit = tools.audit();
        assertThat(audit).contains("\"host\":\"denied.example.test\"").contains("\"answer\":\"NXDOMAIN\"");
        assertThat(audit).doesNotContain("\"host\":\"denied.example.test\",\"port\"");
    }

    @Test
    void dnsOverUdpIsAnsweredByTheStubAndNeverReachesAResolver() throws Exception {
        String label = randomLabel();
        String zone = "  - name: zone\n    hosts: [\"*.zone.example.test\"]\n    ports: [443]\n";
        try (CanaryResolver canary = new CanaryResolver()) {
            tools.resolveThrough(canary);
            String dig = "env -i /usr/bin/dig +notcp +tries=1 +time=3 ";
            ExternalProcess.Result r = tools.run(zone, Map.of(), dig + "+short " + HOST + " A; echo dig=$?; "
                    + dig + "denied.example.test A | grep -o 'status: [A-Z]*'; "
                    + dig + "+short " + label + ".zone.example.test A | sed 's/^/label=/'; "
                    + "env -i /usr/bin/curl -sS --noproxy '*' https://control.zone.example.test/; echo control=$?");
            assertThat(r.stdout()).as(r.stderr()).containsPattern("(?m)^198\\.1[89]\\.\\d+\\.\\d+\ndig=0$")
                    .contains("status: NXDOMAIN").containsPattern("(?m)^label=198\\.1[89]\\.\\d+\\.\\d+$");
            // The control: a name the proxy dials is resolved for real, so the canary does hear what leaves.
            assertThat(canary.asked()).as(r.stdout()).contains("control.zone.example.test")
                    .noneMatch(n -> n.contains(label) || n.contains("denied") || n.equals(HOST));
            assertThat(tools.audit()).contains("\"host\":\"" + label + ".zone.example.test\"")
                    .contains("\"host\":\"denied.example.test\"");
        }
    }

    @Test
    void udpToAnyOtherPortOrAddressGoesNowhere() throws IOException {
        // A DNS query for an allowed name, sent where the sandbox's resolver is not: nothing answers it.
        String query = "b\"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07allowed\\x07example"
                + "\\x04test\\x00\\x00\\x01\\x00\\x01\"";
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/python3 -c '"
                + "import socket\n"
                + "for where in [(\"198.18.0.1\", 53), (\"127.0.0.1\", 5353), (\"127.0.0.1\", 443), (\"10.20.30.40\", 53)]:\n"
                + " u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                + " u.settimeout(2)\n"
                + " try:\n  u.sendto(" + query + ", where); u.recvfrom(512); print(\"answered\", where)\n"
                + " except OSError: print(\"nothing\", where[1])\n"
                + "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                + "u.settimeout(5)\n"
                + "u.sendto(" + query + ", (\"127.0.0.1\", 53))\n"
                + "print(\"resolver\", len(u.recvfrom(512)[0]) > 12)\n'");
        assertThat(r.stdout()).as(r.stderr()).doesNotContain("answered").contains("nothing 53\nnothing 5353\n"
                + "nothing 443\nnothing 53\nresolver True");
    }

    @Test
    void ipv6IsCapturedFromTheUlaPrefixLikeIpv4() throws IOException {
        String script = "env -i /usr/bin/dig +short " + HOST + " AAAA | sed 's/^/aaaa=/'; "
                + "env -i /usr/bin/curl -6 -fsS --noproxy '*' --cacert /etc/ssl/certs/ca-certificates.crt "
                + url("/six.txt") + "; echo curl6=$?; env -i /usr/bin/python3 -c '"
                + "import socket\n"
                + "for where in [(\"2001:db8::1\", 443), (\"::1\", 22)]:\n"
                + " try:\n  socket.create_connection(where, timeout=2); print(\"open\", where)\n"
                + " except OSError: print(\"refused\", where[1])\n"
                + "c = socket.create_connection((\"fd5a:11b0:7f00:53::7\", 22), timeout=5)\n"
                + "print(\"unmapped\", c.recv(10))\n'";
        ExternalProcess.Result r = tools.run("", Map.of(), script);
        assertThat(r.stdout()).as(r.stderr()).containsPattern("(?m)^aaaa=fd5a:11b0:7f00:53::[0-9a-f:]+$")
                .contains(BODY + "curl6=0").doesNotContain("open").contains("refused 443\nrefused 22\nunmapped b''");
        // A synthetic address nobody was given is captured like any other, and the proxy names nothing behind it.
        assertThat(tools.audit()).contains("\"host\":\"fd5a:11b0:7f00:53:")
                .contains("unknown_synthetic_address");
        assertThat(tools.audit().lines().filter(l -> l.contains("\"path\":\"/six.txt\"")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""));
    }

    private static String randomLabel() {
        java.security.SecureRandom random = new java.security.SecureRandom();
        StringBuilder label = new StringBuilder("x");
        while (label.length() < 63) {
            label.append(Character.forDigit(random.nextInt(36), 36));
        }
        return label.toString();
    }

    @Test
    void udpAndRawSocketsStillGoNowhere() throws IOException {
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/python3 -c '"
                + "import socket\n"
                + "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                + "u.settimeout(2)\n"
                + "u.sendto(b\"x\", (\"198.18.0.1\", 443))\n"
                + "try:\n u.recvfrom(10); print(\"udp=answered\")\n"
                + "except OSError: print(\"udp=nothing\")\n"
                + "try:\n socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print(\"raw=open\")\n"
                + "except OSError: print(\"raw=refused\")\n"
                + "try:\n socket.create_connection((\"10.20.30.40\", 443), timeout=2); print(\"direct=open\")\n"
                + "except OSError: print(\"direct=refused\")\n'");
        assertThat(r.stdout()).as(r.stderr()).contains("udp=nothing").contains("raw=refused")
                .contains("direct=refused");
    }

    @Test
    void aSecretPlaceholderIsInjectedOnATransparentConnection() throws IOException {
        Path secret = Files.writeString(dir.resolve("secret"), SECRET_VALUE + "\n");
        String secrets = "secrets:\n  - name: TOKEN\n    from: file:" + secret + "\n    hosts: [" + HOST + "]\n"
                + "    headers: [Authorization]\n";
        ExternalProcess.Result r = tools.run(secrets, Map.of(), "env -i /usr/bin/curl -fsS --noproxy '*' --cacert "
                + "/etc/ssl/certs/ca-certificates.crt -H \"Authorization: Bearer $TOKEN\" " + url("/auth"));
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(site.requests()).anySatisfy(q -> {
            assertThat(q.target()).isEqualTo("/auth");
            assertThat(q.headers().get("authorization")).containsExactly("Bearer " + SECRET_VALUE);
        });
        assertThat(r.stdout()).doesNotContain(SECRET_VALUE);
        assertThat(tools.audit()).contains("\"secrets\":[\"TOKEN\"]").doesNotContain(SECRET_VALUE);
    }

    @Test
    void plainHttpOnACapturedConnectionIsReadAsHttpAndDecided() throws IOException {
        com.sun.net.httpserver.HttpServer plain = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        plain.createContext("/", exchange -> HttpsSite.respond(exchange, 200, "plain hello\n"));
        plain.start();
        try {
            String host = "plain.example.test";
            int port = plain.getAddress().getPort();
            tools.upstream(host, port, "");
            ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/curl -sS --noproxy '*' http://" + host
                    + ":" + port + "/plain.txt; echo curl=$?; env -i /usr/bin/curl -sS --noproxy '*' -H 'Host: "
                    + HOST + "' http://" + host + ":" + port + "/spoofed; echo spoofed=$?");
            assertThat(r.stdout()).as(r.stderr()).contains("plain hello\ncurl=0")
                    .contains("host_mismatch").doesNotContain("plain hello\nspoofed");
            assertThat(tools.audit().lines().filter(l -> l.contains("\"path\":\"/plain.txt\"")))
                    .isNotEmpty().allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\"")
                            .contains("\"tls\":\"none\""));
        } finally {
            plain.stop(0);
        }
    }

    /**
     * A test suite's local server and {@code dig +tcp} (which binds its client socket) work inside, and the
     * sandbox's loopback is its own: a server bound to the very port the host's site listens on answers inside, and
     * the host's site sees nothing.
     */
    @Test
    void localServersAndBoundClientsWorkOnTheSandboxsOwnLoopback() throws IOException {
        int taken = site.port();
        int before = site.requests().size();
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/dig +tcp +short +tries=1 +time=5 " + HOST
                + " A | sed 's/^/dig=/'; env -i /usr/bin/python3 -c '"
                + "import socket, threading\n"
                + "s = socket.socket(); s.bind((\"127.0.0.1\", " + taken + ")); s.listen()\n"
                + "def serve():\n c, _ = s.accept(); c.sendall(b\"inside-server\"); c.close()\n"
                + "threading.Thread(target=serve).start()\n"
                + "c = socket.create_connection((\"127.0.0.1\", " + taken + "), timeout=5)\n"
                + "print(\"local=\" + c.recv(100).decode())\n"
                + "e = socket.socket(); e.bind((\"127.0.0.1\", 0)); print(\"ephemeral=\" + str(e.getsockname()[1] > 0))\n'"
                + "; node -e 'const h = require(\"http\"); const s = h.createServer((q, r) => r.end(\"node-server\"))"
                + ".listen(0, \"127.0.0.1\", () => h.get(\"http://127.0.0.1:\" + s.address().port, r => r.on(\"data\", "
                + "d => { console.log(\"node=\" + d); s.close(); })))'");
        assertThat(r.stdout()).as(r.stderr()).containsPattern("(?m)^dig=198\\.1[89]\\.\\d+\\.\\d+$")
                .contains("local=inside-server").contains("ephemeral=True").contains("node=node-server");
        assertThat(site.requests()).as("the host's listener on that port saw nothing").hasSize(before);
    }

    /** Without capture: no DNS and no way out but the proxy, while the command's own local servers still answer it. */
    @Test
    void noCaptureLeavesTheSandboxWithoutDns() throws IOException {
        ExternalProcess.Result r = tools.runWith(java.util.List.of("--no-capture"), "", Map.of(),
                "env -i /usr/bin/curl -sS --noproxy '*' " + url("/hello.txt") + "; echo curl=$?"
                + "; node -e 'const h = require(\"http\"); const s = h.createServer((q, r) => r.end(\"own-server\"))"
                + ".listen(0, \"127.0.0.1\", () => h.get(\"http://127.0.0.1:\" + s.address().port, r => r.on("
                + "\"data\", d => { console.log(\"node=\" + d); s.close(); })))'");
        assertThat(r.stdout()).as(r.stderr()).contains("curl=6").contains("node=own-server");
        assertThat(tools.audit()).doesNotContain("\"event\":\"dns\"");
    }

    /**
     * Binding is allowed, but not where the sandbox's own relay listens: its TCP port on {@code 127.0.0.1},
     * {@code 0.0.0.0}, {@code [::1]} and {@code [::]} and its UDP port (DNS) refuse another socket even with
     * {@code SO_REUSEADDR} and {@code SO_REUSEPORT}, port 53 is not the command's to bind, and decoy listeners on every
     * address of the site's port (where a captured connection was headed) hear nothing: capture redirects before a
     * socket is looked up, so the connection still reaches the site through the proxy.
     */
    @Test
    void theSandboxCannotTakeOverItsRelaysPortsOrCapturedConnections() throws IOException {
        int port = site.port();
        Files.writeString(tools.workspace().resolve("takeover.py"), """
                import os, socket
                relay = int(os.environ.get("P", "3128"))
                one = lambda s, o: s.setsockopt(socket.SOL_SOCKET, o, 1)
                def bind(kind, family, address, listen):
                    s = socket.socket(family, kind)
                    one(s, socket.SO_REUSEADDR); one(s, socket.SO_REUSEPORT)
                    if family == socket.AF_INET6:
                        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                    try:
                        s.bind(address)
                        if listen: s.listen(16)
                        print("taken", kind.name, address)
                        return s
                    except OSError as e:
                        print("refused", kind.name, address, e.errno)
                for kind, listen in [(socket.SOCK_STREAM, True), (socket.SOCK_DGRAM, False)]:
                    for family, host in [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0"),
                                         (socket.AF_INET6, "::1"), (socket.AF_INET6, "::")]:
                        if not (kind == socket.SOCK_DGRAM and family == socket.AF_INET6):
                            bind(kind, family, (host, relay), listen)
                    bind(kind, socket.AF_INET, ("127.0.0.1", 53), listen)
                decoys = [s for s in [bind(socket.SOCK_STREAM, socket.AF_INET, ("0.0.0.0", %d), True),
                                      bind(socket.SOCK_STREAM, socket.AF_INET6, ("::", %d), True)] if s]
                print("decoys", len(decoys), flush=True)
                os.system("/usr/bin/curl -fsS --noproxy '*' --cacert /etc/ssl/certs/ca-certificates.crt %s")
                for d in decoys:
                    d.setblocking(False)
                    try:
                        d.accept(); print("decoy ACCEPTED")
                    except BlockingIOError:
                        print("decoy heard nothing")
                """.formatted(port, port, url("/hello.txt")));
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/python3 takeover.py");
        assertThat(r.stdout()).as(r.stderr())
                .contains("refused SOCK_STREAM ('127.0.0.1', 53) 13").contains("refused SOCK_DGRAM ('127.0.0.1', 53) 13")
                .containsPattern("decoys [12]").contains(BODY).contains("decoy heard nothing").doesNotContain("decoy ACCEPTED");
        assertThat(r.stdout().lines().filter(l -> l.startsWith("taken ")))
                .as("only the decoys were bound").allSatisfy(l -> assertThat(l).endsWith(", " + port + ")")
                        .matches("taken SOCK_STREAM \\('(0\\.0\\.0\\.0|::)', " + port + "\\)"));
    }

    /**
     * DNS over TCP from the sandbox is held to the per-client connection limit that its explicit and transparent
     * connections have (1,024 by default, {@code proxy.limits}): every connection to its port 53 is relayed to the
     * run's DNS stub, whose TCP listener takes a connection slot for each (once it took none, and each held two
     * threads and three descriptors of the run's JVM: see {@code LimitsAttackTest}). 1,100 connections, each asking
     * once and held open, must not all be answered.
     */
    @Test
    void dnsOverTcpIsHeldUnderThePerClientConnectionLimit() throws IOException {
        Files.writeString(tools.workspace().resolve("dnsflood.py"), """
                import resource, socket, struct
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))     # 1,100 descriptors and some
                q = b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07allowed\\x07example\\x04test\\x00\\x00\\x01\\x00\\x01"
                held, answered, refused, unopened = [], 0, 0, 0
                for i in range(1100):
                    try:
                        c = socket.create_connection(("127.0.0.1", 53), timeout=10)
                    except OSError:                                 # the sandbox's own limit, not the host's
                        unopened += 1
                        continue
                    held.append(c)
                    try:
                        c.sendall(struct.pack("!H", len(q)) + q)
                        answered += len(c.recv(2)) == 2
                    except OSError:
                        pass
                refused = len(held) - answered
                print("answered", answered, "refused", refused, "unopened", unopened, flush=True)
                """);
        ExternalProcess.Result r = tools.run("", Map.of(), "env -i /usr/bin/python3 dnsflood.py");
        Matcher m = Pattern.compile("answered (\\d+) refused (\\d+) unopened 0$", Pattern.MULTILINE).matcher(r.stdout());
        assertThat(m.find()).as(r.stdout() + r.stderr()).isTrue();
        assertThat(Integer.parseInt(m.group(1))).as(m.group()).isLessThanOrEqualTo(1024);
    }
}
