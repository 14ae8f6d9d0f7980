package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.vm.StandInNerdctl;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Transparent capture of two VM-backend sandboxes attached to one running proxy, for real on this host: the whole
 * {@link SandboxRun} with {@code --backend nerdctl}, nerdctl played by the stand-in whose "containers" are network
 * namespaces attached to the runner's bridges by CNI's real plugins ({@link VmSharedProxyTest} has the rest). From
 * inside each guest, with the environment cleared ({@code env -i}) and the gateway as its resolver (what nerdctl's
 * {@code --dns} gives a real guest): {@code curl --noproxy '*'} reaches the sandbox's own name by capture (gateway DNS,
 * a synthetic address, the host table's DNAT to the gateway relay, the original destination from the host's
 * connection tracking, the shared proxy intercepting with the sandbox's own rules and secret); DNS over UDP and TCP
 * both answer; the other sandbox's name is NXDOMAIN, a denied name too and neither is resolved for real (the proxy's
 * resolver is the canary); the other sandbox's synthetic address gets nothing. A process on the host at the gateway's
 * transparent and DNS ports (TCP and UDP) is refused, and each of its addresses is audited under the sandbox.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class VmSharedCaptureTest {

    private static final String A = SharedProxyCaptureTest.HOST_A;
    private static final String B = SharedProxyCaptureTest.HOST_B;

    @Test
    void attachedVmSandboxesAreCapturedEachAsItselfAndStrangersAtTheGatewayAreRefused(Fixture f) throws Exception {
        Path nerdctlA = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl-a")));
        Path nerdctlB = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl-b")));
        for (String tool : List.of("dig", "curl", "unshare")) {
            Prerequisites.require(tool, Executables.find(tool).isPresent(), "scripts/install-deps.sh installs it");
        }
        TestPki pki = TestPki.create();
        Queue<String> asked = new ConcurrentLinkedQueue<>();
        try (HttpsSite siteA = HttpsSite.start(pki.issue(A)); HttpsSite siteB = HttpsSite.start(pki.issue(B));
             SharedProxyTest.Shared shared = SharedProxyCaptureTest.start(f, pki, siteA, siteB, asked)) {
            String urlA = "https://" + A + ":" + siteA.port();
            String urlB = "https://" + B + ":" + siteB.port();
            Path wsA = VmSharedProxyTest.workspace(f, "vm-a");
            Path wsB = VmSharedProxyTest.workspace(f, "vm-b");
            Files.write(wsA.resolve("ca.pem"), shared.caPem());
            Files.write(wsB.resolve("ca.pem"), shared.caPem());
            ByteArrayOutputStream outB = new ByteArrayOutputStream();
            CompletableFuture<Integer> runB = VmSharedProxyTest.inBackground(nerdctlB, wsB,
                    shared.attach("sandbox-b", Optional.empty()), String.join("\n", guest(),
                            captured("-H \"Authorization: Bearer $B_TOKEN\" " + urlB + "/b-own") + " > own.txt 2>&1",
                            "dig @$gw +notcp +short " + B + " A > address.txt 2>&1",
                            literal("literal.txt"),
                            "touch ready", VmSharedProxyTest.RELEASE), outB);
            CompletableFuture<Integer> runA = null;
            ByteArrayOutputStream outA = new ByteArrayOutputStream();
            try {
                VmSharedProxyTest.awaitReady(wsB, runB, outB);
                String addressB = Files.readString(wsB.resolve("address.txt")).strip();
                assertThat(addressB).as(VmSharedProxyTest.files(wsB)).matches("198\\.1[89]\\.\\d+\\.\\d+");
                // A's run captures literal addresses too (network.literal_addresses: capture), B's does not
                Path literals = Files.writeString(f.root.resolve("a-run.yaml"), """
                        network:
                          literal_addresses: capture
                        rules: []
                        """);
                runA = VmSharedProxyTest.inBackground(nerdctlA, wsA, shared.attach("sandbox-a", Optional.empty()),
                        PolicyLoader.load(literals), String.join("\n", guest(),
                                captured("-H \"Authorization: Bearer $A_TOKEN\" " + urlA + "/a-own") + " > own.txt 2>&1",
                                "dig @$gw +notcp +short " + A + " A > udp-a.txt 2>&1",
                                "dig @$gw +tcp +short " + A + " A > tcp-a.txt 2>&1",
                                "dig @$gw +notcp " + B + " A | grep -o 'status: [A-Z]*' > udp-b.txt",
                                "dig @$gw +tcp " + B + " A | grep -o 'status: [A-Z]*' > tcp-b.txt",
                                captured(urlA.replace(A, "denied.example.test") + "/denied") + " > denied.txt 2>&1; "
                                        + "echo $? > denied-exit.txt",
                                // B's own synthetic address, for B's name: what B was given is nothing to A
                                captured("-o /dev/null -w '%{http_code}' --resolve " + B + ":" + siteB.port() + ":"
                                        + addressB + " " + urlB + "/a-via-b-address") + " > via.txt 2> via.err",
                                literal("literal.txt"),
                                "touch ready", VmSharedProxyTest.RELEASE), outA);
                VmSharedProxyTest.awaitReady(wsA, runA, outA);
                String gatewayA = Files.readString(wsA.resolve("gateway.txt")).strip();

                // a process on the host at A's gateway, from three addresses of its own: refused at each port
                assertClosed(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress(gatewayA, 3129),
                        "GET / HTTP/1.1\r\nHost: " + A + "\r\n\r\n");
                assertClosed(new InetSocketAddress("127.0.0.2", 0), new InetSocketAddress(gatewayA, 3130),
                        new String(tcpQuestion(A), StandardCharsets.ISO_8859_1));
                byte[] refused = udpQuestion(new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress(gatewayA, 3130),
                        A);
                assertThat(refused[3] & 0x0f).as("a stranger's question over UDP: REFUSED").isEqualTo(5);
                assertThat(refused[2] & 0x80).as("an answer").isEqualTo(0x80);
                Await.value(() -> "the three strangers audited under sandbox-a; the run said: "
                                + outA.toString(StandardCharsets.UTF_8) + "; the guest: " + VmSharedProxyTest.files(wsA),
                        Duration.ofSeconds(20), () -> VmSharedProxyTest.recordsOf(shared).stream()
                                .filter(r -> r.contains("\"identity\":\"sandbox-a\"")
                                        && r.contains("\"reason\":\"wrong_relay_peer\"")).count() >= 3 ? true : null);

                Files.writeString(wsA.resolve("release"), "");
                Files.writeString(wsB.resolve("release"), "");
                assertThat(runA.get(120, TimeUnit.SECONDS)).as(outA.toString(StandardCharsets.UTF_8)).isZero();
                assertThat(runB.get(120, TimeUnit.SECONDS)).as(outB.toString(StandardCharsets.UTF_8)).isZero();
                String why = VmSharedProxyTest.files(wsA);
                String addressA = Files.readString(wsA.resolve("udp-a.txt")).strip();
                assertThat(addressA).as(why).matches("198\\.1[89]\\.\\d+\\.\\d+").isNotEqualTo(addressB);
                assertThat(wsA.resolve("own.txt")).as(why).hasContent("from a's host");
                assertThat(wsB.resolve("own.txt")).hasContent("from b's host");
                assertThat(Files.readString(wsA.resolve("tcp-a.txt")).strip()).as("DNS over TCP").isEqualTo(addressA);
                assertThat(wsA.resolve("udp-b.txt")).hasContent("status: NXDOMAIN");
                assertThat(wsA.resolve("tcp-b.txt")).hasContent("status: NXDOMAIN");
                assertThat(wsA.resolve("denied-exit.txt")).as("a denied name does not resolve").hasContent("6");
                assertThat(wsA.resolve("via.txt")).as("A connecting to B's address").hasContent("000");
                assertThat(outA.toString(StandardCharsets.UTF_8)).contains("the gateway relays the guest's proxy "
                        + "connections, DNS and captured TCP to it");

                assertThat(siteA.requests()).extracting(r -> r.target() + " " + r.header("authorization"))
                        .containsExactly("/a-own Bearer real-value-of-a");
                assertThat(siteB.requests()).extracting(r -> r.target() + " " + r.header("authorization"))
                        .containsExactly("/b-own Bearer real-value-of-b");
                assertThat(asked).as("names resolved for real: only the two dialed").containsOnly(A, B);

                List<String> records = shared.records();
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"path\":\"/a-own\"", "\"arrival\":\"transparent\"", "\"secrets\":[\"A_TOKEN\"]"));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                        "\"path\":\"/b-own\"", "\"arrival\":\"transparent\"", "\"secrets\":[\"B_TOKEN\"]"));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                        "\"identity\":\"sandbox-a\"", "\"host\":\"" + A + "\"", "\"answer\":\"" + addressA + "\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                        "\"identity\":\"sandbox-a\"", "\"host\":\"" + B + "\"", "\"answer\":\"NXDOMAIN\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                        "\"identity\":\"sandbox-a\"", "\"host\":\"denied.example.test\"", "\"answer\":\"NXDOMAIN\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"host\":\"" + addressB + "\"", "\"reason\":\"unknown_synthetic_address\"",
                        "\"arrival\":\"transparent\""));
                for (String stranger : List.of("127.0.0.1", "127.0.0.2", "127.0.0.3")) {
                    assertThat(records).anySatisfy(r -> assertThat(r).contains("\"client\":\"" + stranger + "\"",
                            "\"identity\":\"sandbox-a\"", "\"reason\":\"wrong_relay_peer\""));
                }
                assertThat(records).as("A's literal address, decided as A's").anySatisfy(r -> assertThat(r).contains(
                        "\"identity\":\"sandbox-a\"", "\"host\":\"203.0.113.7\"", "\"decision\":\"deny\"",
                        "\"arrival\":\"transparent\""));
                assertThat(records).as("B's is never captured").noneMatch(r -> r.contains("sandbox-b")
                        && r.contains("203.0.113.7"));
                assertThat(Files.readString(wsB.resolve("literal.txt"))).as("B: not captured, goes nowhere").endsWith("000");
                assertThat(records).filteredOn(r -> r.contains("\"path\":")).allSatisfy(r -> assertThat(r)
                        .containsAnyOf("\"identity\":\"sandbox-a\"", "\"identity\":\"sandbox-b\""));
            } finally {
                VmSharedProxyTest.release(wsB, runB);
                VmSharedProxyTest.release(wsA, runA);
            }
        }
    }

    /**
     * The start of a guest's script: its gateway, and the gateway as its resolver (nerdctl's {@code --dns}) in a mount
     * namespace of its own. The route to the synthetic prefix is CNI's, from the runner's IPAM routes, as a real
     * guest gets it.
     */
    private static String guest() {
        return String.join("\n",
                "gw=${HTTP_PROXY#http://}; gw=${gw%:*}; echo \"$gw\" > gateway.txt",
                "echo \"nameserver $gw\" > resolv.conf");
    }

    /**
     * A plain HTTP request by capture to an address of TEST-NET-3 (RFC 5737), which no rule allows: the proxy
     * decides it (as an IP-literal CONNECT) only when the run captures literal addresses, and dials nothing.
     */
    private static String literal(String file) {
        return "ip route add 203.0.113.0/24 via $gw; " + captured("-m 5 -o /dev/null -w '%{http_code}' "
                + "http://203.0.113.7:81/literal") + " > " + file + " 2>&1";
    }

    /** A curl that ignores every proxy variable, the environment cleared, resolving through the gateway. */
    private static String captured(String args) {
        return "unshare -m sh -c 'mount --bind \"$PWD/resolv.conf\" /etc/resolv.conf && exec env -i /usr/bin/curl -sS -m 10 "
                + "--noproxy \"*\" --cacert \"$PWD/ca.pem\" \"$@\"' curl " + args;
    }

    /** Connects from {@code from} to {@code to}, writes {@code request}, and expects the connection closed unanswered. */
    private static void assertClosed(InetSocketAddress from, InetSocketAddress to, String request) throws Exception {
        try (Socket host = new Socket()) {
            host.bind(from);
            host.connect(to, 10_000);
            host.setSoTimeout(10_000);
            host.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            try (InputStream in = host.getInputStream()) {
                assertThat(in.readAllBytes()).as("the relay closes a stranger's connection to " + to).isEmpty();
            }
        } catch (java.net.SocketException reset) {
            // closed while the request was being written: refused all the same
        }
    }

    /** A question for {@code name}'s A record, as DNS over UDP carries it. */
    private static byte[] question(String name) {
        ByteBuffer q = ByteBuffer.allocate(512).putShort((short) 0x5a11).putShort((short) 0x0100).putShort((short) 1)
                .putShort((short) 0).putShort((short) 0).putShort((short) 0);
        for (String label : name.split("\\.")) {
            q.put((byte) label.length()).put(label.getBytes(StandardCharsets.US_ASCII));
        }
        q.put((byte) 0).putShort((short) 1).putShort((short) 1);
        byte[] bytes = new byte[q.position()];
        q.flip().get(bytes);
        return bytes;
    }

    /** The same question over TCP: its two-byte length first. */
    private static byte[] tcpQuestion(String name) {
        byte[] q = question(name);
        return ByteBuffer.allocate(2 + q.length).putShort((short) q.length).put(q).array();
    }

    /** Sends the question from {@code from} to {@code to} over UDP and returns the answer. */
    private static byte[] udpQuestion(InetSocketAddress from, InetSocketAddress to, String name) throws Exception {
        try (DatagramSocket socket = new DatagramSocket(from)) {
            socket.setSoTimeout(10_000);
            byte[] q = question(name);
            socket.send(new DatagramPacket(q, q.length, to));
            DatagramPacket answer = new DatagramPacket(new byte[512], 512);
            socket.receive(answer);
            assertThat(answer.getAddress()).isEqualTo(InetAddress.getByName(to.getHostString()));
            return java.util.Arrays.copyOf(answer.getData(), answer.getLength());
        }
    }
}
