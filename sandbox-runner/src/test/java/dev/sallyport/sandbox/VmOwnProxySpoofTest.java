package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.vm.StandInNerdctl;
import dev.sallyport.testing.Await;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A VM run with a proxy of its own (not attached), nerdctl played by the stand-in whose "container" is a network
 * namespace on the run's bridge: the guest, root in it, takes another address of its subnet and speaks from it. The
 * host table drops it, and the run's own audit log has the spoofed source (the guest reaches its own proxy as
 * {@code anonymous}), as a shared proxy's has it under the sandbox's identity.
 */
@Timeout(300)
@ExtendWith(Fixture.Extension.class)
class VmOwnProxySpoofTest {

    @Test
    void aSpoofedSourceIsDroppedAndAuditedByTheRunsOwnProxy(Fixture f) throws Exception {
        Path nerdctl = StandInNerdctl.write(Files.createDirectories(f.root.resolve("nerdctl")));
        Path audit = f.root.resolve("audit.jsonl");
        Path ws = VmSharedProxyTest.workspace(f, "vm-own");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Integer> run = VmSharedProxyTest.inBackground(nerdctl, ws,
                new SandboxRun.ProxyMode.Own(Optional.of(audit)), null, String.join("\n",
                        "gw=${HTTP_PROXY#http://}; gw=${gw%:*}",
                        "other=${gw%.*}.77; echo \"$other\" > other-address.txt; ip addr add $other/32 dev eth0",
                        "curl -sS -m 3 --noproxy '' --interface $other -o /dev/null -w '%{http_code}' -x \"$HTTP_PROXY\" "
                                + "http://allowed.test/ > spoof.txt 2> spoof.err",
                        "touch ready", VmSharedProxyTest.RELEASE), out);
        try {
            VmSharedProxyTest.awaitReady(ws, run, out);
            String other = Files.readString(ws.resolve("other-address.txt")).strip();
            assertThat(ws.resolve("spoof.txt")).as("dropped on the host: nothing answers").hasContent("000");
            String record = Await.value(() -> "a spoofed_source record for " + other + "; the run said: "
                    + out.toString(StandardCharsets.UTF_8), Duration.ofSeconds(20), () -> {
                        if (!Files.exists(audit)) {
                            return null;
                        }
                        try {
                            return Files.readAllLines(audit).stream().filter(l -> l.contains("\"spoofed_source\"")
                                    && l.contains(other)).findFirst().orElse(null);
                        } catch (java.io.IOException e) {
                            return null;
                        }
                    });
            assertThat(record).contains("\"decision\":\"deny\"", "\"identity\":\"anonymous\"");
        } finally {
            VmSharedProxyTest.release(ws, run);
        }
        assertThat(run.get()).as(out.toString(StandardCharsets.UTF_8)).isZero();
    }
}
