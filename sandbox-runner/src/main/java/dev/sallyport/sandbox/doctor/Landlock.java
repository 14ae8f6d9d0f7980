package dev.sallyport.sandbox.doctor;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * Reads the kernel's Landlock ABI version: {@code landlock_create_ruleset(NULL, 0,
 * LANDLOCK_CREATE_RULESET_VERSION)} through libc's {@code syscall}. Nothing is restricted by this call.
 */
public final class Landlock {

    /** {@code __NR_landlock_create_ruleset}: 444 on x86_64 and aarch64 (the generic syscall table). */
    private static final long NR_LANDLOCK_CREATE_RULESET = 444;
    private static final int LANDLOCK_CREATE_RULESET_VERSION = 1;

    private Landlock() {
    }

    /** The outcome: an ABI version, or why there is none. */
    public record Probe(OptionalInt abi, String reason) {
    }

    /** Asks the kernel. Never throws: a failure is reported in {@link Probe#reason()}. */
    @SuppressWarnings("restricted")     // the syscall(2) downcall is this probe's job; the jar enables native access
    public static Probe probe() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!arch.equals("amd64") && !arch.equals("x86_64") && !arch.equals("aarch64")) {
            return new Probe(OptionalInt.empty(), "syscall number unknown on " + arch);
        }
        try {
            Linker linker = Linker.nativeLinker();
            StructLayout state = Linker.Option.captureStateLayout();
            VarHandle errnoHandle = state.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
            MethodHandle syscall = linker.downcallHandle(
                    linker.defaultLookup().find("syscall").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT),
                    Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment errnoState = arena.allocate(state);
                long result = (long) syscall.invokeExact(errnoState, NR_LANDLOCK_CREATE_RULESET,
                        MemorySegment.NULL, 0L, LANDLOCK_CREATE_RULESET_VERSION);
                if (result > 0) {
                    return new Probe(OptionalInt.of((int) result), "");
                }
                int errno = (int) errnoHandle.get(errnoState, 0L);
                return new Probe(OptionalInt.empty(), switch (errno) {
                    case 38 -> "the kernel has no Landlock (ENOSYS)";
                    case 95 -> "Landlock is built in but disabled at boot (EOPNOTSUPP)";
                    case 1 -> "blocked by a seccomp filter (EPERM)";
                    default -> "landlock_create_ruleset failed with errno " + errno;
                });
            }
        } catch (Throwable e) {
            return new Probe(OptionalInt.empty(), "cannot call the kernel from Java: " + e.getMessage()
                    + " (run the JVM with --enable-native-access=ALL-UNNAMED)");
        }
    }
}
