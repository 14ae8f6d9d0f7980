package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Landlock through {@code java.lang.foreign}: ABI probe, ruleset building and {@code landlock_restrict_self} for
 * the calling thread (never TSYNC: only the thread that then replaces the process with the sandboxed command is
 * confined, see {@link Exec}). Rights are masked to what the ABI in use knows. From ABI 9 the ruleset handles
 * {@code RESOLVE_UNIX} and grants it nowhere: the command connects only to pathname unix sockets created inside
 * its own domain.
 */
public final class Landlock {
    // File system rights (ABI 1 unless noted).
    static final long EXECUTE = 1L, WRITE_FILE = 1L << 1, READ_FILE = 1L << 2, READ_DIR = 1L << 3,
            REMOVE_DIR = 1L << 4, REMOVE_FILE = 1L << 5, MAKE_CHAR = 1L << 6, MAKE_DIR = 1L << 7,
            MAKE_REG = 1L << 8, MAKE_SOCK = 1L << 9, MAKE_FIFO = 1L << 10, MAKE_BLOCK = 1L << 11,
            MAKE_SYM = 1L << 12, REFER = 1L << 13 /* ABI 2 */, TRUNCATE = 1L << 14 /* ABI 3 */,
            IOCTL_DEV = 1L << 15 /* ABI 5 */, RESOLVE_UNIX = 1L << 16 /* ABI 9 */;
    static final long NET_CONNECT_TCP = 1L << 1; // ABI 4 (NET_BIND_TCP, 1L, is left unhandled: bind is free)
    /**
     * A {@code connectPort} that leaves TCP connect unrestricted: the network namespace alone decides where a connect
     * goes.
     */
    public static final int ANY_PORT = -1;
    static final long SCOPE_ABSTRACT_UNIX = 1L, SCOPE_SIGNAL = 1L << 1; // ABI 6

    /** Read and execute: what system folders get. */
    public static final long READ = EXECUTE | READ_FILE | READ_DIR;
    /** Everything a workspace needs, devices excepted. */
    public static final long READ_WRITE = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG
            | MAKE_SOCK | MAKE_FIFO | MAKE_SYM | REFER | TRUNCATE;
    /** Device nodes: read, write, truncate, device ioctls; no creating anything. */
    public static final long DEVICES = READ | WRITE_FILE | TRUNCATE | IOCTL_DEV;

    private static final int CREATE_RULESET_VERSION = 1;
    private static final int RULE_PATH_BENEATH = 1;
    private static final int RULE_NET_PORT = 2;
    private static final long O_PATH = 0x200000L;
    private static final long O_CLOEXEC = 0x80000L;
    private static final long AT_FDCWD = -100L;
    private static final int PR_SET_NO_NEW_PRIVS = 38;
    private static final int PR_SET_DUMPABLE = 4;

    /** One path rule. */
    public record PathRule(Path path, long access) {}

    /** What {@link #restrictCurrentThread} enforced. */
    public record Outcome(int abi, boolean network, boolean scoped, List<String> skipped) {}

    private final Syscalls sys;

    Landlock(Syscalls sys) {
        this.sys = sys;
    }

    public static Landlock forCurrentArch() {
        return new Landlock(new Syscalls(Arch.current()));
    }

    /** The kernel's Landlock ABI version, or 0 when Landlock is missing or disabled. */
    public int abi() {
        Syscalls.Result r = sys.call("landlock_create_ruleset", 0, 0, CREATE_RULESET_VERSION);
        return r.failed() ? 0 : (int) r.value();
    }

    /** {@code prctl(PR_SET_DUMPABLE, 0)} for this process. */
    public void setNotDumpable() {
        check(sys.call("prctl", PR_SET_DUMPABLE, 0, 0), "prctl(PR_SET_DUMPABLE)");
    }

    /**
     * {@code prctl(PR_SET_NO_NEW_PRIVS, 1)} for the calling thread and the processes it starts, as bwrap gives the
     * setup: without it (or a capability) an unprivileged process cannot install a seccomp program.
     */
    public void setNoNewPrivileges() {
        check(sys.call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0), "prctl(PR_SET_NO_NEW_PRIVS)");
    }

    static long fsMask(int abi) {
        long mask = (MAKE_SYM << 1) - 1;
        if (abi >= 2) {
            mask |= REFER;
        }
        if (abi >= 3) {
            mask |= TRUNCATE;
        }
        if (abi >= 5) {
            mask |= IOCTL_DEV;
        }
        if (abi >= 9) {
            mask |= RESOLVE_UNIX;
        }
        return mask;
    }

    /** {@link #restrictCurrentThread(List, int, int)} with every right the kernel's ABI knows. */
    public Outcome restrictCurrentThread(List<PathRule> rules, int connectPort) {
        return restrictCurrentThread(rules, connectPort, Integer.MAX_VALUE);
    }

    /**
     * Confines the calling thread and the processes it starts (or becomes) afterwards: the listed paths with
     * their rights, nothing else writable; with ABI 4, TCP connect only to {@code connectPort} (0 = none,
     * {@link #ANY_PORT} = any: then the network namespace alone decides where a connect goes); with ABI 6, no abstract
     * unix sockets or signals outside the domain; with ABI 9, no pathname unix sockets created outside it.
     *
     * <p>TCP bind is not restricted: the command always runs in a network namespace of its own, where a listener is
     * reachable only from inside the sandbox (a test's local server, {@code dig +tcp}'s bound client socket); a
     * refused {@code bind} kept nothing out, since {@code listen} on an unbound socket takes a port anyway. {@code abiCap} limits the ABI used below the kernel's (tests simulate older
     * kernels with it).
     *
     * @throws IllegalStateException when Landlock is missing or a call fails
     */
    public Outcome restrictCurrentThread(List<PathRule> rules, int connectPort, int abiCap) {
        int abi = Math.min(abi(), abiCap);
        if (abi < 1) {
            throw new IllegalStateException("landlock: not available in this kernel (expected: Linux 5.13+ with "
                    + "landlock in the lsm= list)");
        }
        long fs = fsMask(abi);
        boolean network = abi >= 4;
        boolean scoped = abi >= 6;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(24, 8);
            attr.set(ValueLayout.JAVA_LONG, 0, fs);
            long net = connectPort == ANY_PORT ? 0 : NET_CONNECT_TCP;
            attr.set(ValueLayout.JAVA_LONG, 8, network ? net : 0);
            attr.set(ValueLayout.JAVA_LONG, 16, scoped ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0);
            long size = scoped ? 24 : network ? 16 : 8;
            Syscalls.Result ruleset = sys.call("landlock_create_ruleset", attr.address(), size, 0);
            check(ruleset, "landlock_create_ruleset");
            int rulesetFd = (int) ruleset.value();
            List<String> skipped = new ArrayList<>();
            try {
                for (PathRule rule : rules) {
                    if (!addPathRule(arena, rulesetFd, rule, fs)) {
                        skipped.add(rule.path().toString());
                    }
                }
                if (network && connectPort > 0) {
                    MemorySegment port = arena.allocate(16, 8);
                    port.set(ValueLayout.JAVA_LONG, 0, NET_CONNECT_TCP);
                    port.set(ValueLayout.JAVA_LONG, 8, connectPort);
                    check(sys.call("landlock_add_rule", rulesetFd, RULE_NET_PORT, port.address()), "landlock_add_rule net");
                }
                check(sys.call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0), "prctl(PR_SET_NO_NEW_PRIVS)");
                check(sys.call("landlock_restrict_self", rulesetFd, 0, 0), "landlock_restrict_self");
            } finally {
                sys.call("close", rulesetFd, 0, 0);
            }
            return new Outcome(abi, network, scoped, List.copyOf(skipped));
        }
    }

    private boolean addPathRule(Arena arena, int rulesetFd, PathRule rule, long fs) {
        if (!Files.exists(rule.path())) {
            return false;
        }
        MemorySegment path = arena.allocateFrom(rule.path().toString());
        Syscalls.Result fd = sys.call("openat", AT_FDCWD, path.address(), O_PATH | O_CLOEXEC);
        check(fd, "open " + rule.path());
        try {
            long access = rule.access() & fs;
            if (!Files.isDirectory(rule.path())) {
                // Directory-only rights on a file rule are EINVAL.
                access &= EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
            }
            // struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 parent_fd (12 bytes).
            MemorySegment attr = arena.allocate(12, 8);
            attr.set(ValueLayout.JAVA_LONG, 0, access);
            attr.set(ValueLayout.JAVA_INT_UNALIGNED, 8, (int) fd.value());
            check(sys.call("landlock_add_rule", rulesetFd, RULE_PATH_BENEATH, attr.address()),
                    "landlock_add_rule " + rule.path());
            return true;
        } finally {
            sys.call("close", fd.value(), 0, 0);
        }
    }

    private static void check(Syscalls.Result r, String what) {
        if (r.failed()) {
            throw new IllegalStateException("landlock: " + what + " failed: " + Syscalls.errnoName(r.errno())
                    + " (expected: success)");
        }
    }
}
