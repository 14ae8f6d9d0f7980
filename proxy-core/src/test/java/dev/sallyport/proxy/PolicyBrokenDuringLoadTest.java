package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Injected fault: the policy file is rewritten in place with a broken policy, again and again, while clients keep
 * sending requests, with the audit log beside it waking the folder's watch on every record. Every broken version
 * is refused with its line (the old policy stays in force: no request is refused meanwhile), and the good one
 * applies again each time it comes back. The watch reloads only content that reads the same twice a moment
 * apart, so the empty file between truncate and write is never loaded (it would be deny-all).
 */
class PolicyBrokenDuringLoadTest {

    static final int ROUNDS = 4;
    static final int CLIENTS = 3;

    @Test
    void aBrokenPolicyWrittenUnderLoadNeverReplacesTheOneInForce() throws Exception {
        Path dir = ProxyFixture.tempDir();
        Path file = dir.resolve("policy.yaml");
        try (EchoUpstream upstream = EchoUpstream.http()) {
            String target = "upstream.test:" + upstream.port();
            String good = ProxyFixture.policy(null, target, "", "  - name: upstream\n    hosts: [upstream.test]\n"
                    + "    ports: [" + upstream.port() + "]\n    methods: [GET]\n");
            String broken = good.replace("methods: [GET]", "methods: [GET\n  - name: [");
            try (ProxyFixture proxy = ProxyFixture.startFromFile(good, file,
                    new MapResolver().map("upstream.test", "127.0.0.1"), dir)) {
                String goodText = Files.readString(file);
                String brokenText = goodText.replace("methods: [GET]", "methods: [GET\n  - name: [");
                assertThat(brokenText).isNotEqualTo(goodText).isEqualTo(broken.replace("AUDIT_PATH",
                        proxy.auditFile.toString()));
                AtomicBoolean running = new AtomicBoolean(true);
                ConcurrentLinkedQueue<String> refused = new ConcurrentLinkedQueue<>();
                AtomicInteger answered = new AtomicInteger();
                CountDownLatch done = new CountDownLatch(CLIENTS);
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                for (int c = 0; c < CLIENTS; c++) {
                    int client = c;
                    Thread.ofPlatform().daemon().start(() -> {
                        try {
                            for (int i = 0; i < 5_000 && running.get() && System.nanoTime() < deadline; i++) {
                                String answer = RawClient.exchange(proxy.address(), "GET http://" + target + "/c" + client
                                        + "/" + i + " HTTP/1.1\r\nHost: " + target + "\r\nConnection: close\r\n\r\n");
                                answered.incrementAndGet();
                                if (!answer.startsWith("HTTP/1.1 200 ")) {
                                    refused.add(answer.lines().limit(3).toList().toString());
                                }
                            }
                        } finally {
                            done.countDown();
                        }
                    });
                }
                for (int round = 0; round < ROUNDS; round++) {
                    int failures = reloads(proxy, "failure");
                    Files.writeString(file, brokenText);            // in place: truncate, then write
                    Await.until("the broken policy refused (round " + round + ")", Duration.ofSeconds(30),
                            () -> reloads(proxy, "failure") > failures);
                    int successes = reloads(proxy, "success");
                    Files.writeString(file, goodText);
                    Await.until("the good policy back (round " + round + ")", Duration.ofSeconds(30),
                            () -> reloads(proxy, "success") > successes);
                }
                running.set(false);
                done.await();
                assertThat(refused).as("requests refused while broken policies were written").isEmpty();
                assertThat(answered.get()).as("requests answered meanwhile").isGreaterThan(ROUNDS * CLIENTS);
                List<String> errors = proxy.events.events.stream()
                        .filter(e -> e instanceof ProxyEvent.Reloaded r && r.result().equals("failure"))
                        .flatMap(e -> ((ProxyEvent.Reloaded) e).errors().stream()).toList();
                assertThat(errors).as("every refusal names its line").isNotEmpty()
                        .allSatisfy(e -> assertThat(e).containsPattern("policy\\.yaml:\\d+:\\d+: "));
            }
        }
    }

    private static int reloads(ProxyFixture proxy, String result) {
        return (int) proxy.events.events.stream()
                .filter(e -> e instanceof ProxyEvent.Reloaded r && r.result().equals(result)).count();
    }
}
