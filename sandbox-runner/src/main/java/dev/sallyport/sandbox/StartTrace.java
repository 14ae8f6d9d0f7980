package dev.sallyport.sandbox;

import java.io.PrintStream;

/**
 * Where a run's start-up time goes, for measuring it: with {@code SALLYPORT_TRACE_START} set, each {@link #mark}
 * prints one line on stderr, {@code sallyport: start trace: 123.4 ms STEP}, the time since the moment that variable
 * names ({@code SALLYPORT_TRACE_START=$EPOCHREALTIME sallyport run ...}: bash's clock when the command began, so the
 * JVM's own start is counted) or, for any other value, since the first mark. Off (one environment lookup) otherwise.
 */
public final class StartTrace {
    private static final String VARIABLE = "SALLYPORT_TRACE_START";
    /** Epoch microseconds of time zero; -1 when tracing is off, 0 until the first mark sets it. */
    private static long zeroMicros = zero(System.getenv(VARIABLE));

    private StartTrace() {
    }

    /** Prints {@code step} with the time since time zero when tracing is on; nothing otherwise. */
    public static void mark(String step) {
        if (zeroMicros < 0) {
            return;
        }
        mark(step, System.err);
    }

    private static synchronized void mark(String step, PrintStream err) {
        java.time.Instant now = java.time.Instant.now();
        long micros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        if (zeroMicros == 0) {
            zeroMicros = micros;
        }
        err.printf("sallyport: start trace: %.1f ms %s%n", (micros - zeroMicros) / 1000.0, step);
        err.flush();
    }

    /** Epoch microseconds from {@code value} ({@code SECONDS.MICROS}, point or comma), 0 for another value, -1 unset. */
    static long zero(/* @Nullable */ String value) {
        if (value == null || value.isEmpty()) {
            return -1;
        }
        if (value.matches("\\d{1,12}[.,]\\d{6}")) {   // a comma where the locale writes one
            return Long.parseLong(value.replaceAll("[.,]", ""));
        }
        return 0;
    }
}
