package dev.sallyport.proxy.dns;

import dev.sallyport.policy.Decision;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import java.time.Instant;
import java.time.InstantSource;

/**
 * Records DNS answers ({@link ProxyEvent.DnsAnswered}) under a token bucket, so that a flood of queries cannot
 * flood the audit log: up to {@code burst} records at once, refilled at {@code perSecond}. The lookups left out are
 * counted, and the next record says how many ({@code suppressed}), or, when no lookup follows, a record of their own
 * ({@link #flushSuppressed}, on a timer): none goes missing without a trace.
 */
public final class LookupAudit {

    /** The reason of a lookup refused because every mapping is in use. */
    public static final String POOL_FULL = "dns_pool_full";
    /** The reason of the record that only counts lookups the rate limit left out. */
    public static final String SUPPRESSED = "dns_lookups_suppressed";

    private final ProxyEventListener events;
    private final InstantSource clock;
    private final int burst;
    private final int perSecond;
    private double tokens;
    private Instant refilled;
    private long suppressed;

    public LookupAudit(ProxyEventListener events, InstantSource clock, int burst, int perSecond) {
        if (burst < 1 || perSecond < 1) {
            throw new IllegalArgumentException("dns audit: burst " + burst + ", per second " + perSecond
                    + " (expected: both > 0)");
        }
        this.events = events;
        this.clock = clock;
        this.burst = burst;
        this.perSecond = perSecond;
        this.tokens = burst;
        this.refilled = clock.instant();
    }

    /**
     * Writes a record of the lookups left out since the last record, if any ({@code suppressed}, reason
     * {@value #SUPPRESSED}, no name): the proxy calls it every second, so a flood followed by silence is counted
     * within a second rather than with a next lookup that may never come.
     */
    public void flushSuppressed() {
        long skipped;
        synchronized (this) {
            if (suppressed == 0) {
                return;
            }
            skipped = suppressed;
            suppressed = 0;
        }
        events.on(new ProxyEvent.DnsAnswered(clock.instant(), null, null, null, null, null, null, SUPPRESSED,
                skipped, null));
    }

    void answered(String client, String identity, String name, String type, String answer, Decision decision,
                  String reason) {
        Long skipped;
        Instant now = clock.instant();
        synchronized (this) {
            long nanos = java.time.Duration.between(refilled, now).toNanos();
            if (nanos > 0) {
                tokens = Math.min(burst, tokens + nanos * perSecond / 1e9);
                refilled = now;
            } else if (nanos < 0) {
                refilled = now;     // the clock went back: refill from here, not once it has caught up again
            }
            if (tokens < 1) {
                suppressed++;
                return;
            }
            tokens--;
            skipped = suppressed == 0 ? null : suppressed;
            suppressed = 0;
        }
        events.on(new ProxyEvent.DnsAnswered(now, client, name, type, answer,
                decision.verdict().name().toLowerCase(java.util.Locale.ROOT), decision.rule(), reason, skipped,
                identity));
    }
}
