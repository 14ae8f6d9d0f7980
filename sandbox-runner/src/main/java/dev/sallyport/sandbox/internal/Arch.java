package dev.sallyport.sandbox.internal;

import java.util.Locale;
import java.util.Map;

/**
 * The CPU architectures the seccomp filter knows, with the audit arch value the kernel reports in
 * {@code seccomp_data.arch} and the syscall numbers the filter and the Landlock binding use.
 */
enum Arch {
    X86_64(0xC000003E, Map.ofEntries(
            Map.entry("socket", 41), Map.entry("clone", 56), Map.entry("clone3", 435),
            Map.entry("io_uring_setup", 425), Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427),
            Map.entry("ptrace", 101), Map.entry("process_vm_readv", 310), Map.entry("process_vm_writev", 311),
            Map.entry("bpf", 321), Map.entry("perf_event_open", 298), Map.entry("userfaultfd", 323),
            Map.entry("keyctl", 250), Map.entry("add_key", 248), Map.entry("request_key", 249),
            Map.entry("unshare", 272), Map.entry("setns", 308),
            Map.entry("mount", 165), Map.entry("umount2", 166), Map.entry("pivot_root", 155),
            Map.entry("open_tree", 428), Map.entry("move_mount", 429), Map.entry("fsopen", 430),
            Map.entry("fsconfig", 431), Map.entry("fsmount", 432), Map.entry("fspick", 433),
            Map.entry("mount_setattr", 442), Map.entry("kexec_load", 246), Map.entry("kexec_file_load", 320),
            Map.entry("init_module", 175), Map.entry("finit_module", 313), Map.entry("delete_module", 176),
            Map.entry("open_by_handle_at", 304), Map.entry("chroot", 161),
            Map.entry("openat", 257), Map.entry("close", 3), Map.entry("prctl", 157),
            Map.entry("open", 2), Map.entry("creat", 85), Map.entry("openat2", 437), Map.entry("chmod", 90),
            Map.entry("fchmod", 91), Map.entry("fchmodat", 268), Map.entry("fchmodat2", 452),
            Map.entry("mknod", 133), Map.entry("mknodat", 259), Map.entry("prlimit64", 302),
            Map.entry("landlock_create_ruleset", 444), Map.entry("landlock_add_rule", 445),
            Map.entry("landlock_restrict_self", 446))),
    AARCH64(0xC00000B7, Map.ofEntries(
            Map.entry("socket", 198), Map.entry("clone", 220), Map.entry("clone3", 435),
            Map.entry("io_uring_setup", 425), Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427),
            Map.entry("ptrace", 117), Map.entry("process_vm_readv", 270), Map.entry("process_vm_writev", 271),
            Map.entry("bpf", 280), Map.entry("perf_event_open", 241), Map.entry("userfaultfd", 282),
            Map.entry("keyctl", 219), Map.entry("add_key", 217), Map.entry("request_key", 218),
            Map.entry("unshare", 97), Map.entry("setns", 268),
            Map.entry("mount", 40), Map.entry("umount2", 39), Map.entry("pivot_root", 41),
            Map.entry("open_tree", 428), Map.entry("move_mount", 429), Map.entry("fsopen", 430),
            Map.entry("fsconfig", 431), Map.entry("fsmount", 432), Map.entry("fspick", 433),
            Map.entry("mount_setattr", 442), Map.entry("kexec_load", 104), Map.entry("kexec_file_load", 294),
            Map.entry("init_module", 105), Map.entry("finit_module", 273), Map.entry("delete_module", 106),
            Map.entry("open_by_handle_at", 265), Map.entry("chroot", 51),
            Map.entry("openat", 56), Map.entry("close", 57), Map.entry("prctl", 167),
            Map.entry("openat2", 437), Map.entry("fchmod", 52), Map.entry("fchmodat", 53),
            Map.entry("fchmodat2", 452), Map.entry("mknodat", 33), Map.entry("prlimit64", 261),
            Map.entry("landlock_create_ruleset", 444), Map.entry("landlock_add_rule", 445),
            Map.entry("landlock_restrict_self", 446)));

    private final int auditArch;
    private final Map<String, Integer> numbers;

    Arch(int auditArch, Map<String, Integer> numbers) {
        this.auditArch = auditArch;
        this.numbers = numbers;
    }

    int auditArch() {
        return auditArch;
    }

    int nr(String syscall) {
        Integer nr = numbers.get(syscall);
        if (nr == null) {
            throw new IllegalArgumentException("syscall " + syscall + ": unknown on " + this + " (expected: one of "
                    + numbers.keySet() + ")");
        }
        return nr;
    }

    /** Whether this architecture has the call at all (aarch64 has no {@code open}, {@code chmod}, ...). */
    boolean has(String syscall) {
        return numbers.containsKey(syscall);
    }

    /** The architecture this JVM runs on. */
    static Arch current() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return switch (arch) {
            case "amd64", "x86_64" -> X86_64;
            case "aarch64", "arm64" -> AARCH64;
            default -> throw new IllegalStateException("os.arch " + arch
                    + ": no seccomp filter for this architecture (expected: amd64 or aarch64)");
        };
    }
}
