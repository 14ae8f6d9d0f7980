package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The audit log's disk fills, for real: the audit file lives on a 512 KiB tmpfs the test mounts (root only; the
 * unprivileged CI pass runs only sandbox tests). Requests sent while it is full are either forwarded with their
 * record kept (and written once space is freed) or refused {@code 503 audit_unavailable}; never forwarded unrecorded.
 */
class AuditDiskFullTest {

    static Path dir;
    static Path fs;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static String target;
    static final CompletableFuture<Void> dnsGate = new CompletableFuture<>();

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        fs = Files.createDirectory(dir.resolve("audit-fs"));
        ExternalProcess.Result mount = ExternalProcess.run(Duration.ofSeconds(10),
                List.of("mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", fs.toString()), null);
        Prerequisites.require("tmpfs mount", mount.exit() == 0,
                "mounting a small tmpfs needs root (CI runs this as root): " + mount.stderr().strip());
        upstream = EchoUpstream.http();
        target = "upstream.test:" + upstream.port();
        String rules = "  - name: upstream\n    hosts: [upstream.test, gated.test]\n    ports: [" + upstream.port() + "]\n";
        String yaml = ProxyFixture.policy(null, target + ", gated.test:" + upstream.port(), "", rules)
                .replace("AUDIT_PATH", fs.resolve("audit.jsonl").toString());
        proxy = ProxyFixture.start(yaml, new MapResolver().map("upstream.test", "127.0.0.1")
                .gate("gated.test", dnsGate, "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
            upstream.close();
        }
        ExternalProcess.run(Duration.ofSeconds(10), List.of("umount", "-l", fs.toString()), null);
    }

    @Test
    void everyRequestTheUpstreamSawIsInTheLogOnceTheFullDiskHasSpaceAgainAndTheRestWereRefused() throws Exception {
        Path filler = fs.resolve("filler");
        fill(filler);
        freeOnePage(filler);   // room for about a dozen records: the write that does not fit is cut mid-record

        List<String> sent = new ArrayList<>();
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 30; i++) {             // one after the other: the disk fills part way through
            sent.add("/seq/" + i);
            answers.add(get("/seq/" + i));
        }
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {                                      // and a burst from several clients at once while it is full
            List<Future<String>> burst = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String path = "/burst/" + i;
                sent.add(path);
                burst.add(clients.submit((Callable<String>) () -> get(path)));
            }
            for (Future<String> f : burst) {
                answers.add(f.get());
            }
        } finally {
            clients.shutdownNow();
        }
        List<String> refused = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            String status = answers.get(i).lines().findFirst().orElse("");
            if (status.startsWith("HTTP/1.1 503 ")) {
                assertThat(answers.get(i)).contains("X-Sallyport-Reason: audit_unavailable");
                refused.add(sent.get(i));
            } else {
                assertThat(status).as(sent.get(i)).startsWith("HTTP/1.1 200 ");
            }
        }
        List<String> forwarded = upstream.requests.stream().map(r -> r.split(" ")[1]).toList();
        assertThat(refused).as("requests refused while the audit disk was full").isNotEmpty();
        assertThat(forwarded).as("requests forwarded before it filled").isNotEmpty();
        assertThat(forwarded).doesNotContainAnyElementsOf(refused);
        assertThat(gauge("sallyport.audit.failing")).isEqualTo(1.0);
        assertThat(RawClient.exchange(proxy.address(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target
                + "\r\n\r\n")).as("no tunnel opens either").startsWith("HTTP/1.1 503 ")
                .contains("X-Sallyport-Reason: audit_unavailable");

        Files.delete(filler);                      // the disk recovers: the writer writes what it held
        awaitHealthy();
        assertThat(get("/after")).startsWith("HTTP/1.1 200 ");
        proxy.proxy.flushAudit();

        List<String> lines = Files.readAllLines(fs.resolve("audit.jsonl"));
        for (String path : forwarded) {
            assertThat(lines).as("the decision record of " + path)
                    .anyMatch(l -> l.contains("\"path\":\"" + path + "\"") && l.contains("\"decision\":\"allow\"")
                            && !l.contains("\"status\":"));
            assertThat(lines).as("the exchange record of " + path)
                    .anyMatch(l -> l.contains("\"path\":\"" + path + "\"") && l.contains("\"status\":200"));
        }
        for (String path : refused) {
            assertThat(lines).as("the refusal of " + path).anyMatch(l -> l.contains("\"path\":\"" + path + "\"")
                    && l.contains("\"reason\":\"audit_unavailable\""));
        }
        assertThat(lines).as("whole records only: the cut write was resumed at the byte it stopped")
                .allSatisfy(l -> assertThat(l).startsWith("{\"ts\":").endsWith("}"));
        assertThat(lines).anyMatch(l -> l.contains("\"path\":\"/after\"") && l.contains("\"status\":200"));
        assertThat(gauge("sallyport.audit.dropped")).as("records lost").isZero();
    }

    @Test
    void aRequestDecidedBeforeTheDiskFilledButReadyAfterIsRefusedNotForwardedUnrecorded() throws Exception {
        awaitHealthy();
        ExecutorService client = Executors.newSingleThreadExecutor();
        Path filler = fs.resolve("filler-2");
        try {
            String gated = "gated.test:" + upstream.port();
            int lookups = proxy.resolver.calls.get();
            Future<String> early = client.submit(() -> RawClient.exchange(proxy.address(), "GET http://" + gated
                    + "/decided-early HTTP/1.1\r\nHost: " + gated + "\r\nConnection: close\r\n\r\n"));
            Await.until("the request reached its DNS lookup", Duration.ofSeconds(10),   // decided and allowed,
                    () -> proxy.resolver.calls.get() != lookups);                       // waiting on DNS
            fill(filler);                                       // no page left: once the audit file's last
            for (int i = 0; i < 20 && gauge("sallyport.audit.failing") != 1.0; i++) {   // page is full, it fails
                assertThat(get("/fills-it/" + i)).startsWith("HTTP/1.1 ");
            }
            assertThat(gauge("sallyport.audit.failing")).as("the audit log failed").isEqualTo(1.0);
            dnsGate.complete(null);                             // the early request is ready to go upstream now
            assertThat(early.get()).startsWith("HTTP/1.1 503 ").contains("X-Sallyport-Reason: audit_unavailable");
            assertThat(upstream.requests).noneMatch(r -> r.contains("/decided-early"));
        } finally {
            dnsGate.complete(null);
            client.shutdownNow();
            Files.deleteIfExists(filler);
        }
        awaitHealthy();
        proxy.proxy.flushAudit();
        List<String> lines = Files.readAllLines(fs.resolve("audit.jsonl"));
        for (String seen : upstream.requests) {
            String path = seen.split(" ")[1];
            assertThat(lines).as("the exchange record of " + path)
                    .anyMatch(l -> l.contains("\"path\":\"" + path + "\"") && l.contains("\"status\":200"));
        }
        assertThat(lines).as("the refused request's end record").anyMatch(l -> l.contains("\"path\":\"/decided-early\"")
                && l.contains("\"status\":503") && l.contains("\"reason\":\"audit_unavailable\""));
        assertThat(gauge("sallyport.audit.dropped")).as("records lost").isZero();
    }

    private static void awaitHealthy() {
        Await.until("the audit log recovered", Duration.ofSeconds(20), () -> gauge("sallyport.audit.failing") == 0.0);
    }

    private static String get(String path) {
        return RawClient.exchange(proxy.address(), "GET http://" + target + path + " HTTP/1.1\r\nHost: " + target
                + "\r\nConnection: close\r\n\r\n");
    }

    private static double gauge(String name) {
        var registry = proxy.proxy.metrics().registry();
        return name.endsWith("dropped") ? registry.get(name).counter().count() : registry.get(name).gauge().value();
    }

    /** Writes until the file system says it is full. */
    private static void fill(Path filler) throws IOException {
        try (FileChannel out = FileChannel.open(filler, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer page = ByteBuffer.allocate(4096);
            for (int i = 0; i < 1024; i++) {   // 4 MiB at most: far more than the file system holds
                page.clear();
                out.write(page);
            }
            throw new AssertionError("the 512 KiB tmpfs took 4 MiB");
        } catch (IOException full) {
            assertThat(full.getMessage()).contains("No space left on device");
        }
    }

    private static void freeOnePage(Path filler) throws IOException {
        try (FileChannel out = FileChannel.open(filler, StandardOpenOption.WRITE)) {
            out.truncate(out.size() / 4096 * 4096 - 4096);
        }
    }
}
