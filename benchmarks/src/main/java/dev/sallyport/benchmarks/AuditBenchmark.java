package dev.sallyport.benchmarks;

import dev.sallyport.proxy.audit.AuditFailureListener;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Audit record writing, end to end: an exchange record (every field the contract names filled) handed to the
 * audit log, encoded as a JSON line and written to a file on the writer thread. One operation is one record;
 * each invocation hands over 1,000 and waits until they are written, so the figure is the whole cost per
 * record, not only the enqueue that the event loop pays.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AuditBenchmark {

    private static final int BATCH = 1000;

    private Path dir;
    private AuditLog log;
    private ProxyEvent.ExchangeCompleted event;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sallyport-audit-bench");
        log = AuditLog.open(dir.resolve("audit.jsonl").toString(), InstantSource.system(), AuditFailureListener.NONE);
        event = new ProxyEvent.ExchangeCompleted(Instant.now(), new AuditFields("r-000123", "127.0.0.1:51234", null,
                "api.example.com", 443, "192.0.2.10", "POST", "/v1/messages", 200, "allow", "llm-api", null,
                "intercepted", "api.example.com", 2_345L, 18_765L, 412L, List.of("ANTHROPIC_API_KEY")));
    }

    @TearDown
    public void tearDown() throws IOException {
        log.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void exchangeRecord() {
        for (int i = 0; i < BATCH; i++) {
            log.on(event);
        }
        log.flush();
    }
}
