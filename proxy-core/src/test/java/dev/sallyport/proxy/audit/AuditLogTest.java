package dev.sallyport.proxy.audit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {

    private static final InstantSource CLOCK = InstantSource.fixed(Instant.parse("2026-11-30T00:00:00Z"));

    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();
    private final ByteArrayOutputStream stderrBytes = new ByteArrayOutputStream();
    private final PrintStream stderr = new PrintStream(stderrBytes, true, StandardCharsets.UTF_8);

    @Test
    void writesOneLinePerRecordToARealFileAndSkipsGaugeEvents() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (AuditLog log = AuditLog.open(file.toString(), CLOCK, listener)) {
            log.on(AuditEvents.denied("c1"));
            log.on(new ProxyEvent.ConnectionOpened(AuditEvents.TS));
            log.on(AuditEvents.exchange("r1", "/x?token=abc"));
            log.on(new ProxyEvent.Reloaded(AuditEvents.TS, "success", file.toString(), List.of()));
            log.flush();
            assertThat(records(file)).hasSize(3);
        }
        List<String> lines = records(file);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"connect\",\"id\":\"c1\"");
        assertThat(lines.get(1)).contains("\"event\":\"request\"", "\"path\":\"/x\"").doesNotContain("token", "abc");
        assertThat(lines.get(2)).contains("\"event\":\"reload\"", "\"result\":\"success\"", "\"errors\":[]");
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-r-----"));
        assertThat(listener.failures).isEmpty();
    }

    @Test
    void appendsToAnExistingFile() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Files.writeString(file, "{\"old\":1}\n");
        try (AuditLog log = AuditLog.open(file.toString(), CLOCK, listener)) {
            log.on(AuditEvents.denied("c2"));
        }
        assertThat(records(file)).hasSize(2).first().isEqualTo("{\"old\":1}");
    }

    @Test
    void unopenableFileIsOneClearError() {
        Path file = dir.resolve("missing-folder/audit.jsonl");

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AuditLog.open(file.toString(), CLOCK, listener))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("audit.path: cannot open '" + file + "' for appending: ")
                .hasMessageEndingWith("(expected: a writable file in an existing folder, or \"-\" for stdout)");
    }

    @Test
    void dashWritesToStdout() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, false, StandardCharsets.UTF_8));
        try (AuditLog log = AuditLog.open("-", CLOCK, listener)) {
            log.on(AuditEvents.denied("c3"));
            log.flush();
            assertThat(captured.toString(StandardCharsets.UTF_8))
                    .startsWith("{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"connect\",\"id\":\"c3\"")
                    .endsWith("}\n");
        } finally {
            System.setOut(original);
        }
        assertThat(listener.failures).isEmpty();
    }

    @Test
    void failingWritesKeepEveryRecordRefuseNewRequestsSayItOnceAndWriteThemOnRecovery() throws Exception {
        ToggleStream sink = new ToggleStream();
        try (AuditLog log = AuditLog.start(streamLog(sink, 1024, 16))) {
            log.on(AuditEvents.exchange("ok-1", "/a"));
            log.flush();
            assertThat(log.accepting()).isTrue();

            sink.failing = true;
            assertThat(log.admit(AuditEvents.denied("held-1"))).isTrue();
            // the writer stops accepting, then tells its listener and stderr: wait for all three
            await(() -> !log.accepting() && !listener.failures.isEmpty() && !stderrLines().isEmpty());
            log.on(AuditEvents.exchange("held-2", "/c"));          // the end of an admitted exchange: kept
            assertThat(log.admit(AuditEvents.denied("refused"))).as("nothing new is admitted").isFalse();
            assertThat(listener.failures).singleElement().asString()
                    .startsWith("sallyport: audit log test-sink: write failed (").contains("disk full")
                    .contains("kept and retried", "refusing new requests");
            assertThat(listener.dropped.get()).isZero();
            assertThat(log.recordsLost()).isZero();
            assertThat(stderrLines()).hasSize(1);

            sink.failing = false;
            await(log::accepting);
            log.flush();
            assertThat(listener.recovered.get()).isEqualTo(1);
            assertThat(stderrLines()).hasSize(2).last().asString().contains("writing again; records lost in total: 0");
        }
        List<String> records = recordLines(sink.text());
        assertThat(records).hasSize(3);
        assertThat(records.get(0)).contains("\"id\":\"ok-1\"");
        assertThat(records.get(1)).contains("\"id\":\"held-1\"");
        assertThat(records.get(2)).contains("\"id\":\"held-2\"");
        assertThat(sink.text()).doesNotContain("refused");
        assertThat(listener.dropped.get()).isZero();
    }

    @Test
    void aFailedSinkIsRetriedWithoutNewRecordsUntilItTakesWhatIsHeld() throws Exception {
        ToggleStream sink = new ToggleStream();
        try (AuditLog log = AuditLog.start(streamLog(sink, 1024, 16))) {
            sink.failing = true;
            assertThat(log.admit(AuditEvents.denied("held"))).isTrue();
            await(() -> !log.accepting());
            sink.failing = false;
            await(log::accepting);
            assertThat(log.recordsWritten()).isEqualTo(1);
        }
        assertThat(recordLines(sink.text())).singleElement().asString().contains("\"id\":\"held\"");
    }

    @Test
    void admissionStopsAtTheCapacityTheEndsOfAdmittedExchangesUseTheReserveAndRefusalsAreCounted() throws Exception {
        GateStream sink = new GateStream();
        int capacity = 4;
        AuditLog log = AuditLog.start(streamLog(sink, capacity, 2));
        try {
            assertThat(log.admit(AuditEvents.denied("first"))).isTrue();
            assertThat(sink.entered.await(10, TimeUnit.SECONDS)).isTrue();   // the writer is now blocked
            for (int i = 0; i < capacity; i++) {
                assertThat(log.admit(AuditEvents.denied("admitted-" + i))).isTrue();
            }
            assertThat(log.accepting()).isTrue();
            assertThat(log.admit(AuditEvents.denied("over"))).as("the queue holds its capacity").isFalse();
            assertThat(log.accepting()).isFalse();
            assertThat(listener.failures).singleElement().asString().contains("queue of 4 records full");

            log.on(AuditEvents.exchange("end-0", "/"));          // ends of admitted exchanges: the reserve
            log.on(AuditEvents.exchange("end-1", "/"));
            assertThat(listener.dropped.get()).isZero();
            log.on(AuditEvents.denied("refusal"));               // a refusal's record: lost while the queue is full
            log.on(AuditEvents.exchange("end-2", "/"));          // an end beyond the reserve: lost
            assertThat(listener.dropped.get()).isEqualTo(2);
            assertThat(stderrLines()).hasSize(2).last().asString().contains("1 records lost: ");

            sink.release.countDown();
            await(log::accepting);
            log.flush();
        } finally {
            sink.release.countDown();
            log.close();
        }
        List<String> records = recordLines(sink.text());
        assertThat(records).hasSize(1 + capacity + 2);
        assertThat(sink.text()).doesNotContain("\"over\"", "refusal", "end-2");
        assertThat(log.recordsWritten()).isEqualTo(7);
        assertThat(log.recordsLost()).isEqualTo(2);
    }

    @Test
    void whileFailingTheRecordsOfRefusalsAreKeptOnlyUpToASixteenthOfTheQueue() throws Exception {
        ToggleStream sink = new ToggleStream();
        try (AuditLog log = AuditLog.start(streamLog(sink, 32, 16))) {
            sink.failing = true;
            assertThat(log.admit(AuditEvents.denied("held"))).isTrue();
            await(() -> !log.accepting());
            for (int i = 0; i < 5; i++) {
                log.on(AuditEvents.denied("refused-" + i));     // an attacker's refused requests: 2 are kept
            }
            log.on(AuditEvents.exchange("end", "/"));            // the end of an admitted exchange still is
            assertThat(log.recordsLost()).isEqualTo(3);
            assertThat(stderrLines()).last().asString().contains("holds at most 2 records of refusals");
            sink.failing = false;
            await(log::accepting);
            log.flush();
        }
        assertThat(recordLines(sink.text())).hasSize(4);
    }

    @Test
    void closingWhileTheSinkStillFailsCountsAndSaysWhatIsLost() {
        ToggleStream sink = new ToggleStream();
        sink.failing = true;
        AuditLog log = AuditLog.start(streamLog(sink, 1024, 16));
        assertThat(log.admit(AuditEvents.denied("held"))).isTrue();
        log.on(AuditEvents.exchange("end", "/"));
        long started = System.nanoTime();
        log.close();
        assertThat((System.nanoTime() - started) / 1_000_000).as("close gives a failing sink about 2 s").isLessThan(10_000);
        assertThat(log.recordsLost()).isEqualTo(2);
        assertThat(listener.dropped.get()).isEqualTo(2);
        assertThat(stderrBytes.toString(StandardCharsets.UTF_8))
                .contains("the sink still refuses writes at shutdown; 2 records are lost");
    }

    @Test
    void aFileEndingInTheMiddleOfARecordGetsALineFeedBeforeTheNextOne() throws Exception {
        Path file = dir.resolve("cut.jsonl");
        Files.writeString(file, "{\"old\":1}\n{\"cut\":");
        try (AuditLog log = AuditLog.open(file.toString(), CLOCK, listener)) {
            log.on(AuditEvents.denied("after"));
        }
        List<String> lines = records(file);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(1)).isEqualTo("{\"cut\":");
        assertThat(lines.get(2)).startsWith("{\"ts\":").contains("\"id\":\"after\"");
    }

    @Test
    void concurrentProducersEveryRecordWrittenExactlyOnce() throws Exception {
        Path file = dir.resolve("concurrent.jsonl");
        int threads = 8;
        int perThread = 4000;
        try (AuditLog log = AuditLog.open(file.toString(), CLOCK, listener)) {
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> producers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                producers.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < perThread; i++) {
                        log.on(AuditEvents.exchange("p" + id + "-" + i, "/item/" + i + "?q=hunter2"));
                    }
                }));
            }
            go.countDown();
            for (Thread p : producers) {
                p.join(Duration.ofSeconds(60));
            }
        }
        List<String> lines = records(file);
        assertThat(lines).hasSize(threads * perThread);
        Set<String> ids = new HashSet<>();
        for (String line : lines) {
            assertThat(line).startsWith("{\"ts\":").endsWith("\"}").doesNotContain("hunter2", "?");
            int start = line.indexOf("\"id\":\"") + 6;
            ids.add(line.substring(start, line.indexOf('"', start)));
        }
        assertThat(ids).hasSize(threads * perThread);
        assertThat(listener.dropped.get()).isZero();
    }

    @Test
    void hostileValuesKeepOneRecordPerLine() throws Exception {
        Path file = dir.resolve("hostile.jsonl");
        try (AuditLog log = AuditLog.open(file.toString(), CLOCK, listener)) {
            log.on(AuditEvents.exchange("h1", "/a\"}\n{\"event\":\"forged\"}\u2028\u2029\ud800\r\n/b"));
            log.on(AuditEvents.exchange("h2\n", "/c"));
        }
        byte[] bytes = Files.readAllBytes(file);
        String text = new String(bytes, StandardCharsets.US_ASCII);
        assertThat(text.split("\n", -1)).hasSize(4);   // two records, the close checkpoint and the empty tail
        assertThat(text).doesNotContain("\r", "{\"event\":\"forged\"}");
        for (byte b : bytes) {
            assertThat(b & 0xff).isLessThan(0x7f);
        }
    }

    @Test
    void recordsAfterCloseAreCountedAsLost() {
        AuditLog log = AuditLog.start(streamLog(OutputStream.nullOutputStream(), 16, 0));
        log.close();
        log.on(AuditEvents.denied("late"));
        assertThat(log.accepting()).isFalse();
        assertThat(listener.dropped.get()).isEqualTo(1);
    }

    /** The lines of file that are records (not the chain's checkpoints). */
    private static List<String> records(Path file) throws IOException {
        return Files.readAllLines(file).stream().filter(l -> !l.contains("\"event\":\"checkpoint\"")).toList();
    }

    private AuditLog streamLog(OutputStream sink, int capacity, int reserve) {
        return new AuditLog("test-sink", new StreamSink(sink, false), CLOCK, listener, stderr, capacity, reserve,
                AuditChain.fresh(), AuditKey.generate(), dev.sallyport.policy.AuditSettings.STDOUT);
    }

    private List<String> stderrLines() {
        return stderrBytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static List<String> recordLines(String text) {
        return text.lines().filter(l -> !l.isBlank() && !l.contains("\"event\":\"checkpoint\"")).toList();
    }

    private static void await(BooleanSupplier condition) {
        Await.until("the log's state changed", Duration.ofSeconds(20), condition);
    }

    static final class RecordingListener implements AuditFailureListener {
        final List<String> failures = new CopyOnWriteArrayList<>();
        final AtomicLong dropped = new AtomicLong();
        final AtomicInteger recovered = new AtomicInteger();

        @Override
        public void failed(String message) {
            failures.add(message);
        }

        @Override
        public void dropped(long records) {
            dropped.addAndGet(records);
        }

        @Override
        public void recovered() {
            recovered.incrementAndGet();
        }
    }

    /** A sink that throws while {@code failing} (like a full disk). */
    static final class ToggleStream extends OutputStream {
        private final ByteArrayOutputStream data = new ByteArrayOutputStream();
        volatile boolean failing;

        @Override
        public synchronized void write(int b) throws IOException {
            check();
            data.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            check();
            data.write(b, off, len);
        }

        private void check() throws IOException {
            if (failing) {
                throw new IOException("disk full");
            }
        }

        synchronized String text() {
            return data.toString(StandardCharsets.US_ASCII);
        }
    }

    /** A sink whose first write blocks until released: a writer that cannot keep up. */
    static final class GateStream extends OutputStream {
        private final ByteArrayOutputStream data = new ByteArrayOutputStream();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            entered.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("gate never opened");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            synchronized (this) {
                data.write(b, off, len);
            }
        }

        synchronized String text() {
            return data.toString(StandardCharsets.US_ASCII);
        }
    }
}
