package dev.sallyport.benchmarks;

import com.sun.management.OperatingSystemMXBean;
import dev.sallyport.proxy.audit.AuditFailureListener;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;

/**
 * {@link AuditBenchmark}'s load measured in CPU time instead of wall time (on a loaded machine wall time mostly
 * measures the scheduler): the process's CPU time, every thread, per exchange record handed to the audit log and
 * written to a file, in rounds of 500,000 records (1,000 then a flush). Run:
 * {@code java -cp benchmarks/target/benchmarks.jar dev.sallyport.benchmarks.AuditCpuPerRecord}; the later rounds
 * are the warm figure.
 */
public final class AuditCpuPerRecord {

    private static final int ROUNDS = 8;
    private static final int PER_ROUND = 500_000;
    private static final int BATCH = 1000;

    private AuditCpuPerRecord() {}

    public static void main(String[] args) throws Exception {
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Path dir = Files.createTempDirectory("sallyport-audit-cpu");
        Path file = dir.resolve("audit.jsonl");
        ProxyEvent.ExchangeCompleted event = new ProxyEvent.ExchangeCompleted(Instant.now(), new AuditFields("r-000123",
                "127.0.0.1:51234", null, "api.example.com", 443, "192.0.2.10", "POST", "/v1/messages", 200, "allow",
                "llm-api", null, "intercepted", "api.example.com", 2_345L, 18_765L, 412L, List.of("ANTHROPIC_API_KEY")));
        try (AuditLog log = AuditLog.open(file.toString(), InstantSource.system(), AuditFailureListener.NONE)) {
            for (int round = 0; round < ROUNDS; round++) {
                long cpu = os.getProcessCpuTime();
                long wall = System.nanoTime();
                for (int i = 0; i < PER_ROUND; i += BATCH) {
                    for (int j = 0; j < BATCH; j++) {
                        log.on(event);
                    }
                    log.flush();
                }
                System.out.printf("round %d: %.2f us CPU and %.2f us wall per record%n", round,
                        (os.getProcessCpuTime() - cpu) / 1e3 / PER_ROUND, (System.nanoTime() - wall) / 1e3 / PER_ROUND);
                Files.writeString(file, "");   // the next round appends from 0: the disk stays small
            }
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }
}
