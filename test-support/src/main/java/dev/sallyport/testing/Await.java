package dev.sallyport.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assertions;

/**
 * Waits for something another thread does (a gauge reaching a value, a record reaching a file) by polling with a
 * deadline, instead of sleeping a fixed time. Polls every millisecond; fails the test with what it waited for.
 *
 * <pre>{@code
 * Await.until("the audit log recovered", Duration.ofSeconds(20), () -> gauge("sallyport.audit.failing") == 0);
 * }</pre>
 */
public final class Await {
    private static final long POLL_NANOS = 1_000_000;

    private Await() {
    }

    /** Returns once {@code condition} holds; fails with {@code what} when it still does not after {@code timeout}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        Objects.requireNonNull(condition, "condition");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                Assertions.fail(what + ": not within " + describe(timeout));
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /**
     * Returns the first non-null value {@code probe} gives; fails with {@code what} when it gave only nulls for
     * {@code timeout}.
     */
    public static <T> T value(String what, Duration timeout, Supplier<T> probe) {
        return value(() -> what, timeout, probe);
    }

    /** {@link #value(String, Duration, Supplier)} with a description made at the failure (to show the state then). */
    public static <T> T value(Supplier<String> what, Duration timeout, Supplier<T> probe) {
        Objects.requireNonNull(probe, "probe");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T value = probe.get();
            if (value != null) {
                return value;
            }
            if (System.nanoTime() - deadline > 0) {
                Assertions.fail(what.get() + ": not within " + describe(timeout));
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    private static String describe(Duration timeout) {
        return timeout.toMillis() % 1000 == 0 ? timeout.toSeconds() + " s" : timeout.toMillis() + " ms";
    }
}
