package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Policy;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.vm.StandInNerdctl;
import dev.sallyport.sandbox.vm.VmRuntime;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two VM-backend sandboxes attached to one running proxy, each on its own bridge, for real on this host: the whole
 * {@link SandboxRun} with {@code --backend nerdctl} and a shared proxy, nerdctl played by the stand-in whose
 * "containers" are network namespaces attached by CNI's real plugins (host-local giving each guest the address the
 * runner fixed with {@code --ip}); the bridges, the tables, the gateway relays, the table watch and the reports to the
 * proxy are the runner's. Each sandbox reaches only its own upstream with only its own secret, every record names it,
 * and sandbox A, root in its namespace, tries to be B: from B's address (and from another address of its own
 * subnet) on its bridge, through B's gateway relay, with a PROXY header of its own, with headers; a process on the
 * host tries A's relay. Each is refused, and the spoofed sources, the stranger at the relay and the forged header are
 * in the proxy's audit log under A's identity.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class VmSharedProxyTest {

    /** Waits (bounded) for the test to write {@code release}, so both sandboxes are up at once. */
    static final String RELEASE = "n=0; while [ ! -e release ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done";

    @Test
    void twoVmSandboxesOnOneProxyEachGetOnlyTheirOwnAndASpoofedSourceIsDroppedAndAudited(Fixture f) throws Exception {
        // a stand-in each: its container list is the state folder's, and each run's teardown waits for its own only
        Path nerdctlA = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl-a")));
        Path nerdctlB = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl-b")));
        Prerequisites.require("dig", Executables.find("dig").isPresent(), "bind9-dnsutils (scripts/install-deps.sh)");
        try (SharedProxyTest.Upstream upA = SharedProxyTest.Upstream.start("from a's upstream");
             SharedProxyTest.Upstream upB = SharedProxyTest.Upstream.start("from b's upstream");
             SharedProxyTest.Shared shared = SharedProxyTest.Shared.start(f, upA.port(), upB.port())) {
            String a = "http://127.0.0.1:" + upA.port();
            String b = "http://127.0.0.1:" + upB.port();
            String curl = "curl -sS -m 10 --noproxy '' ";
            Path wsB = workspace(f, "vm-b");
            ByteArrayOutputStream outB = new ByteArrayOutputStream();
            CompletableFuture<Integer> runB = inBackground(nerdctlB, wsB, shared.attach("sandbox-b", Optional.empty()),
                    String.join("\n",
                            "echo \"$HTTP_PROXY\" > proxy.txt",
                            "ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1 > guest.txt",
                            curl + "-H \"Authorization: Bearer $B_TOKEN\" " + b + "/b-own > own.txt",
                            curl + "-o /dev/null -w '%{http_code}' " + a + "/b-to-a > other.txt",
                            "printf %s \"$B_TOKEN\" > placeholder.txt",
                            "touch ready", RELEASE), outB);
            Path wsA = workspace(f, "vm-a");
            ByteArrayOutputStream outA = new ByteArrayOutputStream();
            CompletableFuture<Integer> runA = null;
            try {
                awaitReady(wsB, runB, outB);
                assertThat(wsB.resolve("own.txt")).hasContent("from b's upstream");
                assertThat(wsB.resolve("other.txt")).hasContent("403");
                String proxyB = Files.readString(wsB.resolve("proxy.txt")).strip();
                String guestB = Files.readString(wsB.resolve("guest.txt")).strip();
                assertThat(proxyB).as("the guest's proxy is its gateway's relay").matches("http://10\\.213\\.\\d+\\.1:3128");
                assertThat(guestB).as("the address the runner fixed").isEqualTo(proxyB.substring(7, proxyB.lastIndexOf('.'))
                        + ".2");

                Files.writeString(wsA.resolve("b-placeholder.txt"), Files.readString(wsB.resolve("placeholder.txt")));
                // the relay's header comes first, then the guest's own: a PROXY v2 header with a made-up token
                String forged = "\\x0d\\x0a\\x0d\\x0a\\x00\\x0d\\x0a\\x51\\x55\\x49\\x54\\x0a\\x20\\x00\\x00\\x43\\xe1\\x00\\x40"
                        + "0".repeat(64);
                runA = inBackground(nerdctlA, wsA, shared.attach("sandbox-a", Optional.empty()),
                        String.join("\n",
                                "gw=${HTTP_PROXY#http://}; gw=${gw%:*}; echo \"$gw\" > gateway.txt",
                                curl + "-H \"Authorization: Bearer $A_TOKEN\" " + a + "/a-own > own.txt",
                                curl + "-o /dev/null -w '%{http_code}' " + b + "/a-to-b > other.txt",
                                curl + "-o /dev/null -w '%{http_code}' -H \"Authorization: Bearer $(cat b-placeholder.txt)\" "
                                        + a + "/a-with-b > stolen.txt",
                                curl + "-o /dev/null -w '%{http_code}' -H 'X-Sallyport-Identity: sandbox-b' "
                                        + "-H 'Forwarded: for=sandbox-b' " + b + "/a-as-b > header.txt",
                                "bash -c 'exec 3<>/dev/tcp/'$gw'/3128; printf \"" + forged + "GET " + b
                                        + "/a-forged HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n\" >&3; cat <&3' > forged.txt 2>&1",
                                "curl -sS -m 5 --noproxy '' -o /dev/null -w '%{http_code}' -x " + proxyB + " " + b
                                        + "/a-via-b-relay > b-relay.txt 2> b-relay.err",
                                // guest root takes B's address, then one more of its own subnet, and speaks from each
                                "ip addr add " + guestB + "/32 dev eth0",
                                "curl -sS -m 3 --noproxy '' --interface " + guestB + " -o /dev/null -w '%{http_code}' -x \"$HTTP_PROXY\" "
                                        + b + "/a-from-b-address > spoof-b.txt 2> spoof-b.err",
                                "other=${gw%.*}.77; echo \"$other\" > other-address.txt; ip addr add $other/32 dev eth0",
                                "curl -sS -m 3 --noproxy '' --interface $other -o /dev/null -w '%{http_code}' -x \"$HTTP_PROXY\" "
                                        + a + "/a-from-other-address > spoof-any.txt 2> spoof-any.err",
                                // captured attached: a name no rule of A's names is NXDOMAIN, an address the stub never
                                // gave A is refused by the proxy
                                "dig @$gw +time=3 +tries=1 allowed.test > dns.txt 2>&1",
                                                "curl -sS -m 5 --noproxy '*' -o /dev/null -w '%{http_code}' http://198.18.0.5/ "
                                        + "> synthetic.txt 2> synthetic.err",
                                "touch ready", RELEASE), outA);
                awaitReady(wsA, runA, outA);
                String gatewayA = Files.readString(wsA.resolve("gateway.txt")).strip();
                String otherAddress = Files.readString(wsA.resolve("other-address.txt")).strip();

                // a process on the host reaches A's relay (over loopback): not the guest, so closed unanswered
                try (Socket host = new Socket(gatewayA, 3128)) {
                    host.setSoTimeout(10_000);
                    host.getOutputStream().write(("GET " + a + "/host-as-a HTTP/1.1\r\nHost: 127.0.0.1:" + upA.port() + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    try (InputStream in = host.getInputStream()) {
                        assertThat(in.readAllBytes()).as("the relay closes a stranger's connection").isEmpty();
                    }
                } catch (java.net.SocketException reset) {
                    // closed while the request was being written: refused all the same
                }
                Await.value(() -> "the spoofed sources and the stranger audited under sandbox-a; the run said: "
                        + outA.toString(StandardCharsets.UTF_8) + "; the guest: " + files(wsA), Duration.ofSeconds(20),
                        () -> recordsOf(shared).stream().filter(r -> r.contains("\"identity\":\"sandbox-a\"")
                                && (r.contains("\"reason\":\"spoofed_source\"")
                                || r.contains("\"reason\":\"wrong_relay_peer\""))).count() >= 3 ? true : null);
                Files.writeString(wsA.resolve("release"), "");
                Files.writeString(wsB.resolve("release"), "");
                assertThat(runA.get(120, TimeUnit.SECONDS)).as(outA.toString(StandardCharsets.UTF_8)).isZero();
                assertThat(runB.get(120, TimeUnit.SECONDS)).as(outB.toString(StandardCharsets.UTF_8)).isZero();

                assertThat(wsA.resolve("own.txt")).hasContent("from a's upstream");
                assertThat(wsA.resolve("other.txt")).hasContent("403");
                assertThat(wsA.resolve("stolen.txt")).hasContent("403");
                assertThat(wsA.resolve("header.txt")).hasContent("403");
                assertThat(Files.readString(wsA.resolve("forged.txt"))).doesNotContain("from b's upstream");
                assertThat(wsA.resolve("b-relay.txt")).as("B's gateway relay from A's bridge: reset by A's table")
                        .hasContent("000");
                assertThat(wsA.resolve("spoof-b.txt")).as("from B's address: dropped").hasContent("000");
                assertThat(wsA.resolve("spoof-any.txt")).as("from another address: dropped").hasContent("000");
                assertThat(Files.readString(wsA.resolve("dns.txt"))).as("DNS to the gateway: decided as A's")
                        .contains("status: NXDOMAIN");
                assertThat(wsA.resolve("synthetic.txt")).as("an address never given to A: refused").hasContent("000");
                assertThat(Files.readString(wsA.resolve("synthetic.err"))).as("reached, and closed unanswered")
                        .containsAnyOf("Empty reply", "reset by peer");
                assertThat(outA.toString(StandardCharsets.UTF_8)).contains("sent packets from " + guestB,
                        "sent packets from " + otherAddress);

                assertThat(upA.seen()).containsExactly("/a-own Bearer real-value-of-a");
                assertThat(upB.seen()).containsExactly("/b-own Bearer real-value-of-b");
                List<String> records = shared.records();
                assertThat(records).filteredOn(r -> r.contains("\"path\":")).allSatisfy(r -> assertThat(r)
                        .containsAnyOf("\"identity\":\"sandbox-a\"", "\"identity\":\"sandbox-b\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"path\":\"/a-own\"", "\"secrets\":[\"A_TOKEN\"]"));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                        "\"path\":\"/b-own\"", "\"secrets\":[\"B_TOKEN\"]"));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"path\":\"/a-with-b\"", "\"reason\":\"secret_wrong_client\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"path\":\"/a-as-b\"", "\"decision\":\"deny\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-b\"",
                        "\"path\":\"/b-to-a\"", "\"decision\":\"deny\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"reason\":\"forged_proxy_header\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"client\":\"" + guestB + "\"",
                        "\"identity\":\"sandbox-a\"", "\"decision\":\"deny\"", "\"reason\":\"spoofed_source\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"client\":\"" + otherAddress + "\"",
                        "\"identity\":\"sandbox-a\"", "\"reason\":\"spoofed_source\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"client\":\"" + gatewayA + "\"",
                        "\"identity\":\"sandbox-a\"", "\"reason\":\"wrong_relay_peer\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                        "\"host\":\"198.18.0.5\"", "\"reason\":\"unknown_synthetic_address\""));
                assertThat(records).anySatisfy(r -> assertThat(r).contains("\"event\":\"dns\"",
                        "\"identity\":\"sandbox-a\"", "\"host\":\"allowed.test\"", "\"answer\":\"NXDOMAIN\""));
                assertThat(records).noneMatch(r -> r.contains("a-via-b-relay") || r.contains("a-from-")
                        || r.contains("host-as-a"));
            } finally {
                release(wsB, runB);
                release(wsA, runA);
            }
        }
    }

    /** Lets a run's workload end and waits for its teardown (also when the test failed half way). */
    static void release(Path workspace, /* @Nullable */ CompletableFuture<Integer> run) throws Exception {
        if (run != null) {
            Files.writeString(workspace.resolve("release"), "");
            run.get(120, TimeUnit.SECONDS);
        }
    }

    /** The guest's result files, for a failure's message. */
    static String files(Path workspace) {
        StringBuilder text = new StringBuilder();
        try (var listed = Files.list(workspace)) {
            for (Path p : listed.filter(p -> p.toString().endsWith(".txt") || p.toString().endsWith(".err")).toList()) {
                text.append(p.getFileName()).append('=').append(Files.readString(p).strip()).append("; ");
            }
        } catch (java.io.IOException e) {
            text.append(e);
        }
        return text.toString();
    }

    static List<String> recordsOf(SharedProxyTest.Shared shared) {
        try {
            return shared.records();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static Path workspace(Fixture f, String name) throws Exception {
        Path ws = Files.createDirectories(f.root.resolve(name));
        Files.setAttribute(ws, "unix:uid", 1000);   // the workload never runs as root: the workspace is a user's
        Files.setAttribute(ws, "unix:gid", 1000);
        return ws;
    }

    static CompletableFuture<Integer> inBackground(Path nerdctl, Path workspace,
                                                           SandboxRun.ProxyMode.Attached proxy, String script,
                                                           ByteArrayOutputStream out) {
        return inBackground(nerdctl, workspace, proxy, null, script, out);
    }

    /** The same, the run given {@code policy} (null: none, the default). */
    static CompletableFuture<Integer> inBackground(Path nerdctl, Path workspace, SandboxRun.ProxyMode proxy,
                                                   /* @Nullable */ Policy policy, String script,
                                                   ByteArrayOutputStream out) {
        return inBackground(nerdctl, workspace, proxy, policy, true, script, out);
    }

    /** The same, capturing or not ({@code --no-capture}). */
    static CompletableFuture<Integer> inBackground(Path nerdctl, Path workspace, SandboxRun.ProxyMode proxy,
                                                   /* @Nullable */ Policy policy, boolean capture, String script,
                                                   ByteArrayOutputStream out) {
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        return CompletableFuture.supplyAsync(() -> {
            try {
                // the stand-in runs the workload where the test runs: into the workspace first (nerdctl's -w)
                SandboxRun.Builder run = SandboxRun.builder(List.of("bash", "-c", "cd '" + workspace + "'\n" + script),
                        workspace);
                if (policy != null) {
                    run.policy(policy);
                }
                return run.proxy(proxy)
                        .backend(new SandboxRun.Backend.Nerdctl(VmRuntime.RUNC, "debian:12", false, nerdctl.toString(),
                                capture))
                        .build().run(print, print);
            } catch (Exception e) {
                e.printStackTrace(print);
                return -1;
            }
        });
    }

    static void awaitReady(Path workspace, CompletableFuture<Integer> run, ByteArrayOutputStream out) {
        Await.until("the sandbox in " + workspace.getFileName() + " is ready", Duration.ofSeconds(120),
                () -> Files.exists(workspace.resolve("ready")) || run.isDone());
        assertThat(run).as(out.toString(StandardCharsets.UTF_8)).isNotDone();
    }
}
