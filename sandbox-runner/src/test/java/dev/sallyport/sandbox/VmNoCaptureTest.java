package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.vm.StandInNerdctl;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code sallyport run --backend nerdctl --no-capture} for real on this host, with its own proxy and attached to a
 * shared one: nerdctl played by the stand-in whose "container" is a network namespace on the run's bridge (CNI's real
 * plugins, the runner's real table). The guest has no route to the synthetic prefix, its DNS to the gateway gets no
 * answer (the table rejects it), TCP to the gateway's transparent and DNS ports is refused, nothing on the host listens
 * there either, and the explicit proxy through {@code HTTP_PROXY} still works, injecting the secret.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class VmNoCaptureTest {

    @Test
    void withItsOwnProxyOnlyTheExplicitProxyPortIsReachable(Fixture f) throws Exception {
        try (SharedProxyTest.Upstream up = SharedProxyTest.Upstream.start("from the upstream")) {
            Path policy = Files.writeString(f.root.resolve("run.yaml"), """
                    network:
                      allow_private: ["127.0.0.1:%1$d"]
                      literal_addresses: capture
                    rules:
                      - {name: upstream, cidrs: [127.0.0.1/32], ports: [%1$d]}
                    """.formatted(up.port()));
            Path audit = f.root.resolve("audit.jsonl");
            check(f, "vm-own", new SandboxRun.ProxyMode.Own(Optional.of(audit)), PolicyLoader.load(policy), up,
                    "from the upstream", "sallyport: capture is off (--no-capture)", "");
            assertThat(up.seen()).containsExactly("/own null");
        }
    }

    @Test
    void attachedTheGatewayRelayBindsOnlyTheProxyPort(Fixture f) throws Exception {
        try (SharedProxyTest.Upstream up = SharedProxyTest.Upstream.start("from a's upstream");
             SharedProxyTest.Upstream other = SharedProxyTest.Upstream.start("from b's upstream");
             SharedProxyTest.Shared shared = SharedProxyTest.Shared.start(f, up.port(), other.port())) {
            check(f, "vm-attached", shared.attach("sandbox-a", Optional.empty()), null, up,
                    "from a's upstream",
                    "the gateway relays the guest's proxy connections to it; capture is off (--no-capture)",
                    "-H \"Authorization: Bearer $A_TOKEN\" ");
            assertThat(up.seen()).containsExactly("/own Bearer real-value-of-a");
            assertThat(shared.records()).anySatisfy(r -> assertThat(r).contains("\"identity\":\"sandbox-a\"",
                    "\"path\":\"/own\"", "\"arrival\":\"explicit\""));
            assertThat(shared.records()).noneMatch(r -> r.contains("\"event\":\"dns\""));
        }
    }

    /** One run without capture; what its guest saw, and what the host has on the gateway while it runs. */
    private static void check(Fixture f, String name, SandboxRun.ProxyMode proxy, /* @Nullable */ Policy policy,
                              SharedProxyTest.Upstream up, String body, String firstLine, String curlArgs)
            throws Exception {
        Prerequisites.require("dig", Executables.find("dig").isPresent(), "bind9-dnsutils (scripts/install-deps.sh)");
        Path nerdctl = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl-" + name)));
        Path ws = VmSharedProxyTest.workspace(f, name);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Integer> run = VmSharedProxyTest.inBackground(nerdctl, ws, proxy, policy, false,
                String.join("\n",
                        "gw=${HTTP_PROXY#http://}; gw=${gw%:*}; echo \"$gw\" > gateway.txt",
                        "ip route show > routes.txt",
                        "dig @$gw +notcp +time=3 +tries=1 allowed.test > dig-udp.out 2>&1; echo $? > dig-udp.txt",
                        "dig @$gw +tcp +time=3 +tries=1 allowed.test > dig-tcp.out 2>&1; echo $? > dig-tcp.txt",
                        "for p in 3129 3130; do (exec 3<>/dev/tcp/$gw/$p) 2> port-$p.err; echo $? > port-$p.txt; done",
                        "curl -sS -m 10 --noproxy '' " + curlArgs + "http://127.0.0.1:" + up.port() + "/own "
                                + "> explicit.txt 2> explicit.err",
                        "touch ready", VmSharedProxyTest.RELEASE), out);
        try {
            VmSharedProxyTest.awaitReady(ws, run, out);
            String why = VmSharedProxyTest.files(ws) + " the run said: " + out.toString(StandardCharsets.UTF_8);
            String gateway = Files.readString(ws.resolve("gateway.txt")).strip();
            assertThat(Files.readString(ws.resolve("routes.txt"))).as(why).doesNotContain("198.18.0.0/15")
                    .doesNotContain("default");
            for (String dig : List.of("dig-udp", "dig-tcp")) {
                assertThat(Files.readString(ws.resolve(dig + ".txt")).strip()).as(why).isNotEqualTo("0");
                assertThat(Files.readString(ws.resolve(dig + ".out"))).as(why).doesNotContain("status:");
            }
            for (int port : List.of(3129, 3130)) {
                assertThat(Files.readString(ws.resolve("port-" + port + ".txt")).strip()).as(why).isEqualTo("1");
                assertThat(Files.readString(ws.resolve("port-" + port + ".err"))).as(why)
                        .contains("Connection refused");
            }
            // on the host, while the run lasts: the proxy (or relay) listens on the proxy port only
            try (Socket explicit = new Socket()) {
                explicit.connect(new InetSocketAddress(gateway, 3128), 5000);
            }
            for (int port : List.of(3129, 3130)) {
                assertThatThrownBy(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress(gateway, port), 5000);
                    }
                }).as("nothing listens on %s:%d", gateway, port).isInstanceOf(ConnectException.class);
            }
            assertThat(ws.resolve("explicit.txt")).as(why).hasContent(body);
            assertThat(out.toString(StandardCharsets.UTF_8)).contains(firstLine).doesNotContain("warning");
        } finally {
            VmSharedProxyTest.release(ws, run);
        }
        assertThat(run.get(120, TimeUnit.SECONDS)).as(out.toString(StandardCharsets.UTF_8)).isZero();
    }
}
