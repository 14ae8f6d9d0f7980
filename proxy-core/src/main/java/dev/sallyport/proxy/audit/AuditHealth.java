package dev.sallyport.proxy.audit;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether the audit log writes normally or is in a failure episode, and what it lost: one stderr line when an
 * episode begins, one for the first loss in it, one when it ends; the {@link AuditFailureListener} is told each.
 * Called from the writer and from event loops: nothing here blocks.
 */
final class AuditHealth {

    private sealed interface State {
        record Healthy() implements State {}

        record Failing(String cause) implements State {}
    }

    private static final State HEALTHY = new State.Healthy();

    private final String target;
    private final AuditFailureListener listener;
    private final PrintStream stderr;
    private final AtomicReference<State> state = new AtomicReference<>(HEALTHY);
    private final AtomicBoolean lossSaid = new AtomicBoolean();
    private final AtomicLong lost = new AtomicLong();

    AuditHealth(String target, AuditFailureListener listener, PrintStream stderr) {
        this.target = target;
        this.listener = listener;
        this.stderr = stderr;
    }

    boolean healthy() {
        return state.get() instanceof State.Healthy;
    }

    long lost() {
        return lost.get();
    }

    /** Begins a failure episode (once: later causes in the same episode are not news). */
    void fail(String cause) {
        if (state.compareAndSet(HEALTHY, new State.Failing(cause))) {
            lossSaid.set(false);
            String message = "sallyport: audit log " + target + ": " + cause
                    + "; refusing new requests until records are written again"
                    + " (expected: a writable audit sink that keeps up; records lost so far: " + lost.get() + ")";
            stderr.println(message);
            listener.failed(message);
        }
    }

    /** Ends the episode, if one is running. */
    void recover() {
        State s = state.get();
        if (s instanceof State.Failing && state.compareAndSet(s, HEALTHY)) {
            say("writing again; records lost in total: " + lost.get());
            listener.recovered();
        }
    }

    /** Counts records that will never be written; the first loss of an episode is said on stderr. */
    void lose(long records, String cause) {
        if (records <= 0) {
            return;
        }
        lost.addAndGet(records);
        listener.dropped(records);
        fail(cause);
        if (lossSaid.compareAndSet(false, true)) {
            say(records + " records lost: " + cause + " (lost in total: " + lost.get()
                    + "; expected: a writable audit sink that keeps up)");
        }
    }

    void say(String line) {
        stderr.println("sallyport: audit log " + target + ": " + line);
    }
}
