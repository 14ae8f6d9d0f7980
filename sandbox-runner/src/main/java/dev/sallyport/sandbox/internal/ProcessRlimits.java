package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The fallback limits where no cgroup is available, set by the setup JVM on itself with {@code prlimit64} (through
 * {@code java.lang.foreign}) before it starts the command, which inherits them: {@code RLIMIT_DATA} (private
 * writable memory of each process) and {@code RLIMIT_NPROC} (tasks of the sandbox's uid, counted in its own user
 * namespace since Linux 5.14, so the host user's other processes do not count).
 */
final class ProcessRlimits {
    static final int RLIMIT_DATA = 2;
    static final int RLIMIT_NPROC = 6;

    private ProcessRlimits() {
    }

    /**
     * Sets both limits, soft and hard (so the command cannot raise them again), each at most the hard limit the
     * process already has (raising it needs a capability); 0 leaves one alone.
     */
    static void apply(long dataBytes, long tasks) {
        Syscalls sys = new Syscalls(Arch.current());
        if (dataBytes > 0) {
            set(sys, RLIMIT_DATA, dataBytes, "RLIMIT_DATA");
        }
        if (tasks > 0) {
            set(sys, RLIMIT_NPROC, tasks, "RLIMIT_NPROC");
        }
    }

    private static void set(Syscalls sys, int resource, long value, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment old = arena.allocate(16, 8); // struct rlimit64 { u64 cur; u64 max; }
            check(sys.call("prlimit64", 0, resource, 0, old.address(), 0), name, value);
            long hard = old.get(ValueLayout.JAVA_LONG, 8); // RLIM_INFINITY is -1: unsigned, larger than any value
            long applied = Long.compareUnsigned(value, hard) < 0 ? value : hard;
            MemorySegment limit = arena.allocate(16, 8);
            limit.set(ValueLayout.JAVA_LONG, 0, applied);
            limit.set(ValueLayout.JAVA_LONG, 8, applied);
            check(sys.call("prlimit64", 0, resource, limit.address(), 0, 0), name, applied);
        }
    }

    private static void check(Syscalls.Result r, String name, long value) {
        if (r.failed()) {
            throw new IllegalStateException("prlimit64(" + name + ", " + value + ") failed: "
                    + Syscalls.errnoName(r.errno()) + " (expected: success)");
        }
    }
}
