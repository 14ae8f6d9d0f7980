package dev.sallyport.proxy.dns;

import dev.sallyport.policy.Decision;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records DNS answers ({@link ProxyEvent.DnsAnswered}) under a token bucket per identity, so that a flood of queries
 * cannot flood the audit log, and one sandbox's flood cannot hide another's lookups: up to {@code burst} records at
 * once for each identity, refilled at {@code perSecond}. The lookups left out are counted, and the identity's next
 * record says how many ({@code suppressed}), or, when no lookup follows, a record of their own ({@link #flushSuppressed},
 * on a timer; {@link #forget}, when a sandbox goes): none goes missing without a trace. There is one bucket for every
 * anonymous client and one for each registered sandbox, so the buckets are as many as the registrations at most.
 */
public final class LookupAudit {

    /** The reason of a lookup refused because every mapping is in use. */
    public static final String POOL_FULL = "dns_pool_full";
    /** The reason of the record that only counts lookups the rate limit left out. */
    public static final String SUPPRESSED = "dns_lookups_suppressed";

    /** One identity's budget of records and its count of lookups left out; guarded by itself. */
    private static final class Bucket {
        double tokens;
        Instant refilled;
        long suppressed;

        Bucket(int burst, Instant now) {
            tokens = burst;
            refilled = now;
        }

        /** The count of lookups left out so far, which is reset; 0 when none. */
        synchronized long takeSuppressed() {
            long skipped = suppressed;
            suppressed = 0;
            return skipped;
        }
    }

    private final ProxyEventListener events;
    private final InstantSource clock;
    private final int burst;
    private final int perSecond;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    public LookupAudit(ProxyEventListener events, InstantSource clock, int burst, int perSecond) {
        if (burst < 1 || perSecond < 1) {
            throw new IllegalArgumentException("dns audit: burst " + burst + ", per second " + perSecond
                    + " (expected: both > 0)");
        }
        this.events = events;
        this.clock = clock;
        this.burst = burst;
        this.perSecond = perSecond;
    }

    /**
     * Writes, for each identity, a record of the lookups left out since its last record, if any ({@code suppressed},
     * reason {@value #SUPPRESSED}, the identity, no name): the proxy calls it every second, so a flood followed by
     * silence is counted within a second rather than with a next lookup that may never come.
     */
    public void flushSuppressed() {
        buckets.forEach(this::writeSuppressed);
    }

    /**
     * Drops {@code identity}'s bucket once its sandbox is gone, first writing the count of its lookups left out, if
     * any: a registration that comes and goes cannot take a bucket for good, nor leave a count unwritten.
     */
    public void forget(String identity) {
        Bucket bucket = buckets.remove(identity);
        if (bucket != null) {
            writeSuppressed(identity, bucket);
        }
    }

    private void writeSuppressed(String identity, Bucket bucket) {
        long skipped = bucket.takeSuppressed();
        if (skipped > 0) {
            events.on(new ProxyEvent.DnsAnswered(clock.instant(), null, null, null, null, null, null, SUPPRESSED,
                    skipped, identity));
        }
    }

    void answered(String client, String identity, String name, String type, String answer, Decision decision,
                  String reason) {
        Long skipped;
        Instant now = clock.instant();
        Bucket bucket = buckets.computeIfAbsent(identity, key -> new Bucket(burst, now));
        synchronized (bucket) {
            long nanos = java.time.Duration.between(bucket.refilled, now).toNanos();
            if (nanos > 0) {
                bucket.tokens = Math.min(burst, bucket.tokens + nanos * perSecond / 1e9);
                bucket.refilled = now;
            } else if (nanos < 0) {
                bucket.refilled = now;  // the clock went back: refill from here, not once it has caught up again
            }
            if (bucket.tokens < 1) {
                bucket.suppressed++;
                return;
            }
            bucket.tokens--;
            skipped = bucket.suppressed == 0 ? null : bucket.suppressed;
            bucket.suppressed = 0;
        }
        events.on(new ProxyEvent.DnsAnswered(now, client, name, type, answer,
                decision.verdict().name().toLowerCase(java.util.Locale.ROOT), decision.rule(), reason, skipped,
                identity));
    }
}
