package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Raw Linux system calls through libc's variadic {@code syscall(long nr, ...)} with {@code java.lang.foreign}: no
 * JNI, no native library of ours. Every argument travels as a {@code long} (pointers as their address); errno is
 * captured with the call so no other libc call can overwrite it first.
 */
final class Syscalls {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SYSCALL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));

    /** The result of one call: {@code value} when it succeeded, else -1 and the errno. */
    record Result(long value, int errno) {
        boolean failed() {
            return value == -1;
        }
    }

    private final Arch arch;

    Syscalls(Arch arch) {
        this.arch = arch;
    }

    Result call(String name, long a, long b, long c, long d, long e) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            long value = (long) SYSCALL.invokeExact(state, (long) arch.nr(name), a, b, c, d, e);
            int errno = value == -1 ? (int) ERRNO.get(state, 0L) : 0;
            return new Result(value, errno);
        } catch (Throwable t) {
            throw new IllegalStateException("syscall " + name + ": native call failed: " + t, t);
        }
    }

    Result call(String name, long a, long b, long c) {
        return call(name, a, b, c, 0, 0);
    }

    /** Human-readable errno for messages ({@code 13 (EACCES)}). */
    static String errnoName(int errno) {
        String name = switch (errno) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 9 -> "EBADF";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 22 -> "EINVAL";
            case 38 -> "ENOSYS";
            case 95 -> "EOPNOTSUPP";
            default -> "errno";
        };
        return errno + " (" + name + ")";
    }
}
