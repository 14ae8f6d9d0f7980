package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Installs a seccomp program on the calling thread only ({@code seccomp(SECCOMP_SET_MODE_FILTER)} without TSYNC),
 * optionally asking for the listener descriptor that user notifications arrive on. No-new-privs must already be
 * set (bwrap does it).
 */
final class Seccomp {
    private static final int SET_MODE_FILTER = 1;
    private static final int FLAG_NEW_LISTENER = 1 << 3;
    /** Since Linux 5.19: once the supervisor has read a notification, only a fatal signal interrupts the wait. */
    private static final int FLAG_WAIT_KILLABLE_RECV = 1 << 5;
    private static final Syscalls SYS = Syscalls.current();

    private Seccomp() {
    }

    /** Installs {@code program}; fails when the kernel refuses it. */
    static void install(byte[] program) throws IOException {
        Syscalls.Result r = apply(program, 0);
        Syscalls.check(r, "seccomp(SET_MODE_FILTER)");
    }

    /** What {@link #installWithListener} did. */
    sealed interface Listener {
        /** Installed; {@code fd} is its notification listener (close-on-exec). */
        record Installed(int fd) implements Listener {}

        /** Nothing installed: this kernel offers no listener (before 5.0). */
        record Unsupported() implements Listener {}

        /**
         * Nothing installed: a filter this thread inherited already has a listener ({@code EBUSY}: the kernel
         * allows one per filter stack), i.e. another sandbox around this one supervises it.
         */
        record HeldAbove() implements Listener {}
    }

    /** Installs {@code program} with a notification listener, or nothing when the kernel cannot give one. */
    static Listener installWithListener(byte[] program) throws IOException {
        Syscalls.Result r = apply(program, FLAG_NEW_LISTENER | FLAG_WAIT_KILLABLE_RECV);
        if (r.failed() && r.errno() == Syscalls.EINVAL) {
            r = apply(program, FLAG_NEW_LISTENER);
        }
        if (r.failed() && r.errno() == Syscalls.EINVAL) {
            return new Listener.Unsupported();
        }
        if (r.failed() && r.errno() == Syscalls.EBUSY) {
            return new Listener.HeldAbove();
        }
        return new Listener.Installed((int) Syscalls.check(r, "seccomp(SET_MODE_FILTER, NEW_LISTENER)"));
    }

    private static Syscalls.Result apply(byte[] program, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment filter = arena.allocateFrom(ValueLayout.JAVA_BYTE, program);
            // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
            MemorySegment fprog = arena.allocate(16, 8);
            fprog.set(ValueLayout.JAVA_SHORT, 0, (short) (program.length / 8));
            fprog.set(ValueLayout.ADDRESS, 8, filter);
            return SYS.call("seccomp", SET_MODE_FILTER, flags, fprog.address());
        }
    }
}
