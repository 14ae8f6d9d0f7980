package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Map;

/**
 * Raw Linux system calls through libc's variadic {@code syscall(long nr, ...)} with {@code java.lang.foreign}: no
 * JNI, no native library of ours. Every argument travels as a {@code long} (pointers as their address); errno is
 * captured with the call so no other libc call can overwrite it first.
 */
@SuppressWarnings("restricted")    // the sandbox's JVMs run with native access enabled for this module
final class Syscalls {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SYSCALL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG),
            Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));

    /** The result of one call: {@code value} when it succeeded, else -1 and the errno. */
    record Result(long value, int errno) {
        boolean failed() {
            return value == -1;
        }
    }

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int ENOEXEC = 8;
    static final int EAGAIN = 11;
    static final int EACCES = 13;
    static final int EFAULT = 14;
    static final int EBUSY = 16;
    static final int ENOTDIR = 20;
    static final int EINVAL = 22;
    static final int ENOSYS = 38;
    static final int ECONNREFUSED = 111;
    private static final Map<Integer, String> ERRNO_NAMES = Map.ofEntries(Map.entry(1, "EPERM"),
            Map.entry(2, "ENOENT"), Map.entry(3, "ESRCH"), Map.entry(4, "EINTR"), Map.entry(8, "ENOEXEC"),
            Map.entry(9, "EBADF"), Map.entry(11, "EAGAIN"), Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"),
            Map.entry(16, "EBUSY"), Map.entry(20, "ENOTDIR"), Map.entry(22, "EINVAL"), Map.entry(36, "ENAMETOOLONG"),
            Map.entry(38, "ENOSYS"),
            Map.entry(40, "ELOOP"), Map.entry(88, "ENOTSOCK"), Map.entry(93, "EPROTONOSUPPORT"),
            Map.entry(95, "EOPNOTSUPP"), Map.entry(97, "EAFNOSUPPORT"), Map.entry(98, "EADDRINUSE"),
            Map.entry(104, "ECONNRESET"), Map.entry(106, "EISCONN"), Map.entry(111, "ECONNREFUSED"),
            Map.entry(115, "EINPROGRESS"));

    private final Arch arch;

    Syscalls(Arch arch) {
        this.arch = arch;
    }

    /** The calls of the architecture this JVM runs on. */
    static Syscalls current() {
        return Current.SYSCALLS;
    }

    private static final class Current {
        static final Syscalls SYSCALLS = new Syscalls(Arch.current());
    }

    Arch arch() {
        return arch;
    }

    /** The call's value, or an IOException naming {@code what} and the errno. */
    static long check(Result r, String what) throws IOException {
        if (r.failed()) {
            throw new IOException(what + ": " + errnoName(r.errno()));
        }
        return r.value();
    }

    Result call(String name, long a, long b, long c, long d, long e) {
        return call6(name, a, b, c, d, e, 0);
    }

    /** A call of six arguments ({@code sendto}, {@code recvfrom}). */
    Result call6(String name, long a, long b, long c, long d, long e, long f) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            long value = (long) SYSCALL.invokeExact(state, (long) arch.nr(name), a, b, c, d, e, f);
            int errno = value == -1 ? (int) ERRNO.get(state, 0L) : 0;
            return new Result(value, errno);
        } catch (Throwable t) {
            throw new IllegalStateException("syscall " + name + ": native call failed: " + t, t);
        }
    }

    /** Room for a call's errno, to pass to {@link #call(MemorySegment, String, long, long, long, long, long)}. */
    static MemorySegment callState(Arena arena) {
        return arena.allocate(CAPTURE);
    }

    /** A call of five arguments with its errno in {@code state} ({@link #callState}): for loops of many calls. */
    Result call(MemorySegment state, String name, long a, long b, long c, long d, long e) {
        try {
            long value = (long) SYSCALL.invokeExact(state, (long) arch.nr(name), a, b, c, d, e, 0L);
            return new Result(value, value == -1 ? (int) ERRNO.get(state, 0L) : 0);
        } catch (Throwable t) {
            throw new IllegalStateException("syscall " + name + ": native call failed: " + t, t);
        }
    }

    Result call(String name, long a, long b, long c) {
        return call(name, a, b, c, 0, 0);
    }

    /** Human-readable errno for messages ({@code 13 (EACCES)}). */
    static String errnoName(int errno) {
        return errno + " (" + ERRNO_NAMES.getOrDefault(errno, "errno") + ")";
    }
}
