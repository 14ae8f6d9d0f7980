package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standalone proxy's transparent capture for a host running containers on a bridge, for real: the test builds
 * a bridge with two "containers" (network namespaces attached by veth pairs, routed via the bridge's gateway) and a
 * third namespace routed through the host (a machine on the LAN), starts {@code sallyport proxy} with
 * {@code proxy.transparent} and {@code proxy.dns} on the gateway, and applies the documented
 * {@code examples/container-host/sallyport-capture.nft} (in a table named for this test, removed afterwards). Then,
 * from inside a container, with no proxy variable: {@code dig} over UDP gets a synthetic address for the allowed
 * name and NXDOMAIN for a denied one, {@code curl} reaches the allowed name through the transparent listener,
 * and everything else (the LAN host, the proxy's admin port, UDP) goes nowhere; the other container cannot use the
 * first one's synthetic address. Every destination is shown reachable before the table, so each failure after it
 * is the table's (and the proxy's) doing. Addresses come from 10.233.0.0/16 and 10.234.0.0/16 and live only on
 * interfaces the test creates; the upstream is on the host's loopback.
 */
class ProxyCaptureNetnsTest {

    private static final String ALLOWED = "allowed.test";
    private static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final Pattern LISTENING = Pattern.compile("proxy listening on [0-9.]+:(\\d+), admin on [0-9.]+:(\\d+)");
    private static final Pattern TRANSPARENT = Pattern.compile("transparent listener on \\S+:(\\d+)");
    private static final Pattern DNS = Pattern.compile("dns stub on \\S+:(\\d+)");
    private static final int REMOTE_PORT = 8080;

    @TempDir
    Path dir;

    private final Deque<List<String>> undo = new ArrayDeque<>();
    private final List<Process> processes = new ArrayList<>();
    private final String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24));
    private int net;
    private String gateway;
    private final String bridge = "spb" + tag;
    private final String client = "sp-" + tag + "-c";
    private final String neighbour = "sp-" + tag + "-n";
    private final String remote = "sp-" + tag + "-r";
    private String remoteAddress;
    private final String table = "sallyport_test_" + tag;
    private String forwardBefore;

    @BeforeEach
    void requirements() throws IOException {
        Prerequisites.requireRoot("network namespaces, a bridge and nftables on the host; run as root, as CI does");
        for (String tool : List.of("ip", "nft", "dig", "curl", "python3")) {
            Prerequisites.require(tool, sh(false, "sh", "-c", "command -v " + tool).exit() == 0,
                    tool + " (scripts/install-deps.sh installs it)");
        }
        String used = sh(true, "ip", "-4", "addr").stdout() + sh(true, "ip", "-4", "route").stdout();
        net = -1;
        for (int tries = 0; tries < 64 && net < 0; tries++) {      // another run's subnets may be in use
            int candidate = ThreadLocalRandom.current().nextInt(10, 250);
            if (!used.contains("10.233." + candidate + ".") && !used.contains("10.234." + candidate + ".")) {
                net = candidate;
            }
        }
        Prerequisites.require("free test subnets", net >= 0, "a free 10.233.N.0/24 and 10.234.N.0/24 on this host");
        gateway = "10.233." + net + ".1";
        remoteAddress = "10.234." + net + ".2";
        forwardBefore = Files.readString(IP_FORWARD).strip();
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (Process p : processes) {
            p.destroy();
            try {
                if (!p.waitFor(15, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        while (!undo.isEmpty()) {
            sh(false, undo.pop().toArray(String[]::new));
        }
        if (forwardBefore != null) {
            Files.writeString(IP_FORWARD, forwardBefore);
        }
    }

    @Test
    void containersOnABridgeAreCapturedByTheDocumentedRules() throws Exception {
        TestPki pki = TestPki.create();
        try (HttpsSite site = HttpsSite.start(pki.issue(ALLOWED))
                .route("/", exchange -> HttpsSite.respond(exchange, 200, "hello from " + ALLOWED + "\n"))) {
            buildNetwork();
            Listening proxy = startProxy(pki, site.port());
            String curlAllowed = "https://" + ALLOWED + ":" + site.port() + "/hello";
            Path ca = dir.resolve("state/ca/ca.pem");
            python(remote, "import socket, threading\n"
                    + "t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                    + "t.bind(('0.0.0.0', " + REMOTE_PORT + ")); t.listen(8)\n"
                    + "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('0.0.0.0', " + REMOTE_PORT + "))\n"
                    + "def udp():\n"
                    + "    while True:\n"
                    + "        d, a = u.recvfrom(100); print('udp', a[0], flush=True); u.sendto(b'udp-answer', a)\n"
                    + "threading.Thread(target=udp, daemon=True).start()\n"
                    + "print('ready', flush=True)\n"
                    + "while True:\n"
                    + "    c, a = t.accept(); print('tcp', a[0], flush=True); c.sendall(b'remote-banner\\n'); c.close()\n");
            String probes = probes();

            assertThat(run(client, probes).stdout()).as("without the table everything is reachable")
                    .contains("tcp-remote=remote-banner").contains("udp-remote=udp-answer");
            assertThat(run(client, "curl -sS -m 5 -o /dev/null -w '%{http_code}' http://" + gateway + ":"
                    + proxy.admin() + "/healthz").stdout()).as("the admin port, bound on the gateway").isEqualTo("200");
            String fromLan = portProbes(proxy);
            assertThat(run(remote, fromLan).stdout()).as("a LAN host routed through this host, without the table")
                    .contains("explicit=open").contains("transparent=open").contains("dns-tcp=open")
                    .contains("dns-udp=answered");

            Path rules = dir.resolve("capture.nft");
            Files.writeString(rules, Files.readString(Path.of("..", "examples", "container-host",
                    "sallyport-capture.nft")).replace("table inet sallyport", "table inet " + table));
            undo.push(List.of("nft", "delete", "table", "inet", table));
            sh(true, "nft", "-D", "bridge_name=" + bridge, "-D", "gateway=" + gateway, "-D", "proxy_port="
                    + proxy.explicit(), "-D", "transparent_port=" + proxy.transparent(), "-D", "dns_port="
                    + proxy.dns(), "-f", rules.toString());

            String answer = run(client, "dig @" + gateway + " +short +time=5 +tries=1 " + ALLOWED + " A").stdout()
                    .strip();
            assertThat(answer).as("a synthetic address, over UDP to the gateway's port 53").startsWith("198.1");
            assertThat(run(client, "dig @" + gateway + " +time=5 +tries=1 denied.test A").stdout())
                    .contains("status: NXDOMAIN");
            ExternalProcess.Result curl = run(client, "env -i /usr/bin/curl -fsS -m 20 --noproxy '*' --cacert " + ca
                    + " " + curlAllowed);
            assertThat(curl.exit()).as(curl.stderr()).isZero();
            assertThat(curl.stdout()).isEqualTo("hello from " + ALLOWED + "\n");
            assertThat(run(client, "env -i /usr/bin/curl -sS -m 10 --noproxy '*' --cacert " + ca + " https://"
                    + "denied.test:" + site.port() + "/; echo curl=$?").stdout()).contains("curl=6");
            ExternalProcess.Result explicit = run(client, "curl -fsS -m 20 -x http://" + gateway + ":"
                    + proxy.explicit() + " --cacert " + ca + " " + curlAllowed);
            assertThat(explicit.stdout()).as("the explicit listener still serves clients that use it: "
                    + explicit.stderr()).isEqualTo("hello from " + ALLOWED + "\n");

            int requests = site.requests().size();
            ExternalProcess.Result borrowed = run(neighbour, "curl -sS -m 10 --noproxy '*' --cacert " + ca
                    + " --resolve " + ALLOWED + ":" + site.port() + ":" + answer + " " + curlAllowed + "; echo curl=$?");
            assertThat(borrowed.stdout()).as("another container cannot use the first one's mapping")
                    .doesNotContain("hello").doesNotContain("curl=0");
            assertThat(site.requests()).hasSize(requests);

            String after = run(client, probes).stdout();
            assertThat(after).as("a LAN host: the connection lands on the proxy, which refuses it")
                    .doesNotContain("remote-banner").contains("udp-remote=nothing");
            assertThat(run(client, "curl -sS -m 5 -o /dev/null -w '%{http_code}' http://" + gateway + ":"
                    + proxy.admin() + "/healthz; echo ' curl='$?").stdout()).as("the admin port")
                    .doesNotStartWith("200");
            assertThat(run(remote, fromLan).stdout()).as("the proxy's ports are the bridge's only: a LAN host that "
                    + "routes to the gateway address through this host is dropped")
                    .contains("explicit=timeout").contains("transparent=timeout").contains("dns-tcp=timeout")
                    .contains("dns-udp=nothing");

            String audit = Await.value("the audit records of the refusals", Duration.ofSeconds(20), () -> {
                try {
                    String text = Files.readString(dir.resolve("audit.jsonl"));
                    return text.contains("\"reason\":\"unknown_synthetic_address\"")
                            && text.contains("\"host\":\"" + remoteAddress + "\"") ? text : null;
                } catch (IOException e) {
                    return null;
                }
            });
            assertThat(audit).contains("\"answer\":\"NXDOMAIN\"").contains("\"arrival\":\"transparent\"");
            assertThat(audit.lines().filter(l -> l.contains("\"host\":\"" + remoteAddress + "\"")))
                    .allSatisfy(l -> assertThat(l).contains("\"decision\":\"deny\""));
            assertThat(audit.lines().filter(l -> l.contains("\"path\":\"/hello\"")))
                    .anySatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""))
                    .anySatisfy(l -> assertThat(l).contains("\"arrival\":\"explicit\""));

            sh(true, "nft", "delete", "table", "inet", table);
            undo.pop();
            assertThat(sh(true, "nft", "list", "tables").stdout()).doesNotContain(table);
        }
    }

    /**
     * The same bridge with an IPv6 network too, the proxy's transparent listener and DNS stub on {@code [::]} (one
     * dual-stack socket each) and both documented tables, {@code sallyport-capture.nft} then
     * {@code sallyport-capture6.nft}: a container whose resolver is the gateway's IPv6 address gets a synthetic ULA
     * address for {@code AAAA} (and none for {@code A}: a mapping is good only for the address that asked, and its
     * IPv4 address is another), reaches the allowed name over IPv6 through the transparent listener, while its
     * questions over IPv4 still get {@code A} answers only; IPv6 TCP to the gateway's other ports and to another
     * address is refused by the proxy (audited), IPv6 UDP goes nowhere.
     */
    @Test
    void anIpv6NetworkIsCapturedByTheDocumentedIpv6Rules() throws Exception {
        TestPki pki = TestPki.create();
        String gateway6 = "fd5b:0:" + Integer.toHexString(net) + "::1";
        String client6 = "fd5b:0:" + Integer.toHexString(net) + "::2";
        try (HttpsSite site = HttpsSite.start(pki.issue(ALLOWED))
                .route("/", exchange -> HttpsSite.respond(exchange, 200, "hello over six\n"))) {
            buildNetwork();
            sh(true, "ip", "-6", "addr", "add", gateway6 + "/64", "dev", bridge, "nodad");
            sh(true, "ip", "-n", client, "-6", "addr", "add", client6 + "/64", "dev", "spv" + tag + "2p", "nodad");
            sh(true, "ip", "-n", client, "-6", "route", "add", "default", "via", gateway6);
            Files.writeString(Path.of("/etc/netns", client, "resolv.conf"), "nameserver " + gateway6 + "\n");
            Listening proxy = startProxy(pki, site.port(), "[::]");
            Path ca = dir.resolve("state/ca/ca.pem");
            String[] values = {"-D", "bridge_name=" + bridge, "-D", "proxy_port=" + proxy.explicit(), "-D",
                "transparent_port=" + proxy.transparent(), "-D", "dns_port=" + proxy.dns()};
            for (String file : List.of("sallyport-capture.nft", "sallyport-capture6.nft")) {
                Path rules = dir.resolve(file);
                Files.writeString(rules, Files.readString(Path.of("..", "examples", "container-host", file))
                        .replace("inet sallyport", "inet " + table));
                List<String> nft = new ArrayList<>(List.of("nft"));
                nft.addAll(List.of(values));
                nft.addAll(List.of("-D", file.contains("6") ? "gateway6=" + gateway6 : "gateway=" + gateway, "-f",
                        rules.toString()));
                if (undo.stream().noneMatch(u -> u.contains(table))) {
                    undo.push(List.of("nft", "delete", "table", "inet", table));
                }
                sh(true, nft.toArray(String[]::new));
            }

            String dig = "dig +short +time=5 +tries=1 ";
            String aaaa = run(client, dig + "@" + gateway6 + " " + ALLOWED + " AAAA").stdout().strip();
            assertThat(aaaa).as("a synthetic ULA address, asked over IPv6").startsWith("fd5a:11b0:7f00:53:");
            assertThat(run(client, dig + "@" + gateway6 + " " + ALLOWED + " A").stdout().strip())
                    .as("no A answer to a question over IPv6").isEmpty();
            assertThat(run(client, dig + "@" + gateway + " " + ALLOWED + " AAAA").stdout().strip())
                    .as("no AAAA answer to a question over IPv4").isEmpty();
            assertThat(run(client, dig + "@" + gateway + " " + ALLOWED + " A").stdout().strip()).startsWith("198.1");
            ExternalProcess.Result curl = run(client, "env -i /usr/bin/curl -6 -fsS -m 20 --noproxy '*' --cacert "
                    + ca + " https://" + ALLOWED + ":" + site.port() + "/six");
            assertThat(curl.stdout()).as(curl.stderr()).isEqualTo("hello over six\n");
            String probes = "python3 -c \"\n"
                    + "import socket\n"
                    + "for name, where in [('gateway-ssh', ('" + gateway6 + "', 22)),"
                    + " ('other', ('fd5b:0:ffff::9', 443))]:\n"
                    + "    try:\n"
                    + "        c = socket.create_connection(where, timeout=3); c.settimeout(3)\n"
                    + "        print(name + '=' + (c.recv(100).decode().strip() or 'closed'))\n"
                    + "    except OSError as e: print(name + '=' + type(e).__name__)\n"
                    + "u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); u.settimeout(2)\n"
                    + "u.sendto(b'x', ('" + gateway6 + "', 4000))\n"
                    + "try: print('udp=' + u.recvfrom(100)[0].decode())\n"
                    + "except OSError: print('udp=nothing')\n"
                    + "\"";
            assertThat(run(client, probes).stdout()).as("connected to the proxy, which refuses and closes")
                    .containsPattern("gateway-ssh=(closed|ConnectionResetError)")
                    .containsPattern("other=(closed|ConnectionResetError)").contains("udp=nothing");
            String audit = Await.value("the audit records over IPv6", Duration.ofSeconds(20), () -> {
                try {
                    String text = Files.readString(dir.resolve("audit.jsonl"));
                    return text.contains("\"path\":\"/six\"") && text.contains("fd5b:0:ffff:") ? text : null;
                } catch (IOException e) {
                    return null;
                }
            });
            assertThat(audit.lines().filter(l -> l.contains("\"path\":\"/six\"")))
                    .allSatisfy(l -> assertThat(l).contains("\"arrival\":\"transparent\""));
            assertThat(audit.lines().filter(l -> l.contains("fd5b:0:ffff:")))
                    .allSatisfy(l -> assertThat(l).contains("\"decision\":\"deny\""));
        }
    }

    /**
     * From the LAN host: TCP to the proxy's three ports on the gateway address and a DNS question over UDP; prints
     * {@code explicit=open|timeout|...}, {@code transparent=...}, {@code dns-tcp=...} and {@code dns-udp=...}.
     */
    private String portProbes(Listening proxy) {
        return "python3 -c \"\n"
                + "import socket\n"
                + "for name, port in [('explicit', " + proxy.explicit() + "), ('transparent', " + proxy.transparent()
                + "), ('dns-tcp', " + proxy.dns() + ")]:\n"
                + "    try:\n"
                + "        socket.create_connection(('" + gateway + "', port), timeout=3).close(); print(name + '=open')\n"
                + "    except socket.timeout: print(name + '=timeout')\n"
                + "    except OSError as e: print(name + '=' + type(e).__name__)\n"
                + "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3)\n"
                + "u.sendto(bytes.fromhex('123401000001000000000000' + '0161047465737400' + '00010001'), ('"
                + gateway + "', " + proxy.dns() + "))\n"
                + "try: u.recvfrom(512); print('dns-udp=answered')\n"
                + "except OSError: print('dns-udp=nothing')\n"
                + "\"";
    }

    /** A TCP and a UDP probe toward the LAN host; prints {@code tcp-remote=...} and {@code udp-remote=...}. */
    private String probes() {
        return "python3 -c \"\n"
                + "import socket\n"
                + "try:\n"
                + "    c = socket.create_connection(('" + remoteAddress + "', " + REMOTE_PORT + "), timeout=3)\n"
                + "    c.settimeout(3); print('tcp-remote=' + (c.recv(100).decode().strip() or 'closed'))\n"
                + "except OSError as e: print('tcp-remote=' + type(e).__name__)\n"
                + "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)\n"
                + "u.sendto(b'x', ('" + remoteAddress + "', " + REMOTE_PORT + "))\n"
                + "try: print('udp-remote=' + u.recvfrom(100)[0].decode())\n"
                + "except OSError: print('udp-remote=nothing')\n"
                + "\"";
    }

    /** The bridge with the two containers, the LAN host's link, forwarding on, resolv.conf of the containers. */
    private void buildNetwork() throws IOException {
        undo.push(List.of("ip", "link", "del", bridge));
        sh(true, "ip", "link", "add", bridge, "type", "bridge");
        sh(true, "ip", "addr", "add", gateway + "/24", "dev", bridge);
        sh(true, "ip", "link", "set", bridge, "up");
        if (!Files.exists(Path.of("/etc/netns"))) {
            undo.push(List.of("rmdir", "/etc/netns"));
        }
        int host = 2;
        for (String ns : List.of(client, neighbour)) {
            namespace(ns);
            String end = "spv" + tag + host;
            undo.push(List.of("ip", "link", "del", end));
            sh(true, "ip", "link", "add", end, "type", "veth", "peer", "name", end + "p", "netns", ns);
            sh(true, "ip", "link", "set", end, "master", bridge, "up");
            sh(true, "ip", "-n", ns, "addr", "add", "10.233." + net + "." + host + "/24", "dev", end + "p");
            sh(true, "ip", "-n", ns, "link", "set", end + "p", "up");
            sh(true, "ip", "-n", ns, "route", "add", "default", "via", gateway);
            Path etc = Path.of("/etc/netns", ns);
            undo.push(List.of("rm", "-rf", etc.toString()));
            Files.createDirectories(etc);
            Files.writeString(etc.resolve("resolv.conf"), "nameserver " + gateway + "\n");
            host++;
        }
        namespace(remote);
        String end = "spr" + tag;
        undo.push(List.of("ip", "link", "del", end));
        sh(true, "ip", "link", "add", end, "type", "veth", "peer", "name", end + "p", "netns", remote);
        sh(true, "ip", "addr", "add", "10.234." + net + ".1/24", "dev", end);
        sh(true, "ip", "link", "set", end, "up");
        sh(true, "ip", "-n", remote, "addr", "add", remoteAddress + "/24", "dev", end + "p");
        sh(true, "ip", "-n", remote, "link", "set", end + "p", "up");
        sh(true, "ip", "-n", remote, "route", "add", "default", "via", "10.234." + net + ".1");
        Files.writeString(IP_FORWARD, "1");
    }

    private void namespace(String ns) throws IOException {
        undo.push(List.of("ip", "netns", "del", ns));
        sh(true, "ip", "netns", "add", ns);
        sh(true, "ip", "-n", ns, "link", "set", "lo", "up");
    }

    private record Listening(int explicit, int admin, int transparent, int dns) {}

    /** {@code sallyport proxy} with every listener on the gateway, the allowed name resolving to loopback. */
    private Listening startProxy(TestPki pki, int port) throws Exception {
        return startProxy(pki, port, gateway);
    }

    /** The same, with the transparent listener and the DNS stub on {@code capture} ({@code [::]}: both families). */
    private Listening startProxy(TestPki pki, int port, String capture) throws Exception {
        Path policy = dir.resolve("policy").resolve("policy.yaml");
        Files.createDirectories(policy.getParent());
        Files.writeString(policy, """
                proxy:
                  listen: %1$s:0
                  admin: %1$s:0
                  transparent: "%6$s:0"
                  dns: "%6$s:0"
                audit: {path: %2$s}
                upstream:
                  trust: [%3$s]
                network:
                  deny: default
                  allow_private: ["127.0.0.1:%4$d"]
                rules:
                  - name: allowed
                    hosts: [%5$s]
                    ports: [%4$d]
                """.formatted(gateway, dir.resolve("audit.jsonl"), pki.rootPem(policy.getParent()), port, ALLOWED,
                capture));
        Path hosts = Files.writeString(dir.resolve("hosts"), "127.0.0.1 " + ALLOWED + "\n");
        List<String> command = new ArrayList<>(CliProcess.command("proxy", "--config", policy.toString()));
        command.add(1, "-Djdk.net.hosts.file=" + hosts);
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("SALLYPORT_HOME", dir.resolve("state").toString());
        Process process = builder.start();
        processes.add(process);
        BufferedReader stderr = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8));
        int[] ports = CompletableFuture.supplyAsync(() -> {
            int[] found = new int[4];
            try {
                for (String line; (line = stderr.readLine()) != null; ) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        found[0] = Integer.parseInt(m.group(1));
                        found[1] = Integer.parseInt(m.group(2));
                    }
                    for (Map.Entry<Integer, Pattern> p : Map.of(2, TRANSPARENT, 3, DNS).entrySet()) {
                        Matcher n = p.getValue().matcher(line);
                        if (n.find()) {
                            found[p.getKey()] = Integer.parseInt(n.group(1));
                        }
                    }
                    if (line.contains("sallyport: audit log")) {
                        return found;
                    }
                }
                return null;
            } catch (IOException e) {
                return null;
            }
        }).get(60, TimeUnit.SECONDS);
        assertThat(ports).as("the proxy announces its four listeners").isNotNull().doesNotContain(0);
        Thread.ofVirtual().start(() -> {
            try {
                stderr.transferTo(java.io.Writer.nullWriter());
            } catch (IOException ignored) {
                // the proxy stopped
            }
        });
        return new Listening(ports[0], ports[1], ports[2], ports[3]);
    }

    /** Starts {@code script} with python3 in {@code ns} and waits until it prints {@code ready}. */
    private void python(String ns, String script) throws Exception {
        Process p = new ProcessBuilder("ip", "netns", "exec", ns, "python3", "-u", "-c", script)
                .redirectErrorStream(true).start();
        processes.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        }).get(15, TimeUnit.SECONDS)).isEqualTo("ready");
        Thread.ofVirtual().start(() -> {
            try {
                out.transferTo(java.io.Writer.nullWriter());
            } catch (IOException ignored) {
                // it stopped
            }
        });
    }

    /** {@code sh -c script} inside {@code ns}. */
    private static ExternalProcess.Result run(String ns, String script) {
        return ExternalProcess.run(Duration.ofSeconds(60), List.of("ip", "netns", "exec", ns, "sh", "-c", script),
                null);
    }

    private static ExternalProcess.Result sh(boolean check, String... command) throws IOException {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), List.of(command), null);
        if (check && r.exit() != 0) {
            throw new IOException(String.join(" ", command) + ": exit " + r.exit() + ": " + r.stderr().strip());
        }
        return r;
    }
}
