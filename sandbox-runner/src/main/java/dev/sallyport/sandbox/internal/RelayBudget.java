package dev.sallyport.sandbox.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * How many of one sandbox's connections its relays on the host carry at once (every listener of the sandbox takes
 * from the same budget). Each relayed connection costs the host two threads and two descriptors of the runner's,
 * which the sandbox's own task limit does not count; so a sandbox may hold at most half its task limit in relayed
 * connections, and never more than {@link #MOST} (the proxy's default per-client connection limit). A connection
 * over the budget is closed as soon as it is accepted, and the first such close is reported once to
 * {@code onFull}; the budget comes back as connections end.
 */
public final class RelayBudget {

    /** The most connections of one sandbox in flight at once, whatever its task limit. */
    public static final int MOST = 1024;
    /** The fewest, for a tiny task limit: a sandbox still gets a few connections. */
    static final int FEWEST = 8;

    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicBoolean reported = new AtomicBoolean();
    private final IntConsumer onFull;

    private RelayBudget(int limit, IntConsumer onFull) {
        this.limit = limit;
        this.onFull = onFull;
    }

    /** For a sandbox limited to {@code tasks} processes and threads (0 or less: no limit known). */
    public static RelayBudget forTasks(long tasks, IntConsumer onFull) {
        long half = tasks <= 0 ? MOST : tasks / 2;
        return new RelayBudget((int) Math.max(FEWEST, Math.min(MOST, half)), onFull);
    }

    /** For a sandbox whose task limit is unknown ({@link #MOST}), reporting nothing. */
    public static RelayBudget unknownTasks() {
        return forTasks(0, limit -> { });
    }

    /** A budget of exactly {@code limit} connections (tests, and runs that know better). */
    public static RelayBudget of(int limit, IntConsumer onFull) {
        if (limit < 1) {
            throw new IllegalArgumentException("relay budget: " + limit + " (expected: at least 1)");
        }
        return new RelayBudget(limit, onFull);
    }

    public int limit() {
        return limit;
    }

    /** Takes one connection's share; false (and the budget unchanged) when every share is taken. */
    boolean take() {
        while (true) {
            int now = inFlight.get();
            if (now >= limit) {
                if (reported.compareAndSet(false, true)) {
                    onFull.accept(limit);
                }
                return false;
            }
            if (inFlight.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Gives one connection's share back. */
    void give() {
        inFlight.decrementAndGet();
    }

    /** Connections in flight now. */
    int inFlight() {
        return inFlight.get();
    }
}
