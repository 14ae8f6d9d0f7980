package dev.sallyport.proxy.dns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.TlsMode;
import dev.sallyport.policy.Verdict;
import dev.sallyport.proxy.events.ProxyEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LookupAuditTest {

    private static final Decision DENY = new Decision(Verdict.DENY, null, 0, "no_matching_rule", TlsMode.INTERCEPT,
            null);

    @Test
    void aFloodIsCutToTheBurstAndTheNextRecordCountsWhatWasLeftOut() {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
        List<ProxyEvent.DnsAnswered> records = new CopyOnWriteArrayList<>();
        LookupAudit audit = new LookupAudit(e -> records.add((ProxyEvent.DnsAnswered) e), now::get, 5, 2);
        for (int i = 0; i < 1_000; i++) {
            audit.answered("127.0.0.1:5000", "anonymous", "x" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        assertThat(records).hasSize(5);
        assertThat(records).allSatisfy(r -> assertThat(r.suppressed()).isNull());
        now.set(now.get().plus(Duration.ofMillis(500)));
        audit.answered("127.0.0.1:5000", "anonymous", "late.test", "TXT", "NXDOMAIN", DENY, DENY.reason());
        assertThat(records).hasSize(6);
        ProxyEvent.DnsAnswered last = records.getLast();
        assertThat(last.suppressed()).isEqualTo(995L);
        assertThat(last.name()).isEqualTo("late.test");
        assertThat(last.type()).isEqualTo("TXT");
        assertThat(last.decision()).isEqualTo("deny");
        assertThat(last.reason()).isEqualTo("no_matching_rule");
    }

    @Test
    void lookupsLeftOutAreCountedByTheTimerWhenNoLookupFollows() {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
        List<ProxyEvent.DnsAnswered> records = new CopyOnWriteArrayList<>();
        LookupAudit audit = new LookupAudit(e -> records.add((ProxyEvent.DnsAnswered) e), now::get, 5, 2);
        audit.flushSuppressed();
        assertThat(records).as("nothing left out: nothing written").isEmpty();
        for (int i = 0; i < 100; i++) {
            audit.answered("127.0.0.1:5000", "anonymous", "x" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        audit.flushSuppressed();
        assertThat(records).hasSize(6);
        ProxyEvent.DnsAnswered count = records.getLast();
        assertThat(count.suppressed()).isEqualTo(95L);
        assertThat(count.reason()).isEqualTo(LookupAudit.SUPPRESSED);
        assertThat(count.name()).isNull();
        assertThat(count.client()).isNull();
        audit.flushSuppressed();
        assertThat(records).as("counted once").hasSize(6);
        now.set(now.get().plus(Duration.ofSeconds(1)));
        audit.answered("127.0.0.1:5000", "anonymous", "late.test", "A", "NXDOMAIN", DENY, DENY.reason());
        assertThat(records.getLast().suppressed()).as("not counted again").isNull();
    }

    /** Injected fault: the machine's clock goes back while the rate limit has spent its burst. */
    @Test
    void aClockGoneBackRefillsFromThenInsteadOfSuppressingUntilItCatchesUp() {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
        List<ProxyEvent.DnsAnswered> records = new CopyOnWriteArrayList<>();
        LookupAudit audit = new LookupAudit(e -> records.add((ProxyEvent.DnsAnswered) e), now::get, 5, 2);
        for (int i = 0; i < 100; i++) {
            audit.answered("127.0.0.1:5000", "anonymous", "x" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        assertThat(records).hasSize(5);
        now.set(now.get().minus(Duration.ofDays(1)));
        audit.answered("127.0.0.1:5000", "anonymous", "back.test", "A", "NXDOMAIN", DENY, DENY.reason());
        now.set(now.get().plus(Duration.ofSeconds(1)));
        audit.answered("127.0.0.1:5000", "anonymous", "later.test", "A", "NXDOMAIN", DENY, DENY.reason());
        assertThat(records).as("a second after the jump back, lookups are recorded again").hasSize(6);
        assertThat(records.getLast().name()).isEqualTo("later.test");
        assertThat(records.getLast().suppressed()).as("what was left out meanwhile is counted").isEqualTo(96L);
    }

    /** The attack: a sandbox floods the DNS stub so that another sandbox's lookups go unrecorded. */
    @Test
    void oneIdentitysFloodDoesNotSpendAnothersRecords() {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
        List<ProxyEvent.DnsAnswered> records = new CopyOnWriteArrayList<>();
        LookupAudit audit = new LookupAudit(e -> records.add((ProxyEvent.DnsAnswered) e), now::get, 5, 2);
        for (int i = 0; i < 1_000; i++) {
            audit.answered("127.0.0.1:5000", "noisy", "x" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        for (int i = 0; i < 3; i++) {
            audit.answered("127.0.0.1:5001", "quiet", "q" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        assertThat(records.stream().filter(r -> "quiet".equals(r.identity())).map(ProxyEvent.DnsAnswered::name))
                .as("every lookup of the quiet sandbox, by name").containsExactly("q0.test", "q1.test", "q2.test");
        audit.flushSuppressed();
        ProxyEvent.DnsAnswered count = records.getLast();
        assertThat(count.identity()).as("the count names whose lookups it stands for").isEqualTo("noisy");
        assertThat(count.suppressed()).isEqualTo(995L);
    }

    @Test
    void aForgottenIdentitysCountIsWrittenAndItsBucketGoes() {
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
        List<ProxyEvent.DnsAnswered> records = new CopyOnWriteArrayList<>();
        LookupAudit audit = new LookupAudit(e -> records.add((ProxyEvent.DnsAnswered) e), now::get, 5, 2);
        for (int i = 0; i < 20; i++) {
            audit.answered("127.0.0.1:5000", "job-1", "x" + i + ".test", "A", "NXDOMAIN", DENY, DENY.reason());
        }
        audit.forget("job-1");
        assertThat(records).hasSize(6);
        assertThat(records.getLast().suppressed()).isEqualTo(15L);
        assertThat(records.getLast().identity()).isEqualTo("job-1");
        audit.flushSuppressed();
        assertThat(records).as("counted once").hasSize(6);
        audit.answered("127.0.0.1:5000", "job-1", "again.test", "A", "NXDOMAIN", DENY, DENY.reason());
        assertThat(records.getLast().name()).as("a new registration of the name starts with a full burst")
                .isEqualTo("again.test");
    }
}
