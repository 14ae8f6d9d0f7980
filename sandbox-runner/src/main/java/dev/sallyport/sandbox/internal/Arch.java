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
            Map.entry("landlock_restrict_self", 446),
            // Sockets, fd passing, exec and the connect() supervisor (Inside and the host side).
            Map.entry("read", 0), Map.entry("write", 1), Map.entry("ioctl", 16), Map.entry("pread64", 17),
            Map.entry("connect", 42), Map.entry("accept4", 288), Map.entry("sendto", 44), Map.entry("recvfrom", 45), Map.entry("sendmsg", 46),
            Map.entry("recvmsg", 47), Map.entry("shutdown", 48), Map.entry("bind", 49), Map.entry("listen", 50),
            Map.entry("getsockname", 51), Map.entry("getpeername", 52), Map.entry("setsockopt", 54), Map.entry("getsockopt", 55),
            Map.entry("execve", 59), Map.entry("fcntl", 72), Map.entry("chdir", 80), Map.entry("geteuid", 107),
            Map.entry("setresuid", 117), Map.entry("setresgid", 119), Map.entry("rt_sigprocmask", 14),
            Map.entry("ppoll", 271), Map.entry("seccomp", 317), Map.entry("pidfd_open", 434),
            Map.entry("pidfd_send_signal", 424), Map.entry("kill", 62), Map.entry("getpgid", 121),
            Map.entry("close_range", 436), Map.entry("pidfd_getfd", 438),
            Map.entry("statx", 332), Map.entry("readlinkat", 267), Map.entry("pipe2", 293),
            Map.entry("getegid", 108))),
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
            Map.entry("landlock_restrict_self", 446),
            Map.entry("read", 63), Map.entry("write", 64), Map.entry("ioctl", 29), Map.entry("pread64", 67),
            Map.entry("connect", 203), Map.entry("accept4", 242), Map.entry("sendto", 206), Map.entry("recvfrom", 207),
            Map.entry("sendmsg", 211), Map.entry("recvmsg", 212), Map.entry("shutdown", 210), Map.entry("bind", 200),
            Map.entry("listen", 201), Map.entry("getsockname", 204), Map.entry("getpeername", 205), Map.entry("setsockopt", 208),
            Map.entry("getsockopt", 209), Map.entry("execve", 221), Map.entry("fcntl", 25), Map.entry("chdir", 49),
            Map.entry("geteuid", 175), Map.entry("setresuid", 147), Map.entry("setresgid", 149),
            Map.entry("rt_sigprocmask", 135), Map.entry("ppoll", 73), Map.entry("seccomp", 277),
            Map.entry("pidfd_open", 434), Map.entry("close_range", 436), Map.entry("pidfd_send_signal", 424),
            Map.entry("kill", 129), Map.entry("getpgid", 155), Map.entry("pidfd_getfd", 438), Map.entry("statx", 291), Map.entry("readlinkat", 78), Map.entry("pipe2", 59),
            Map.entry("getegid", 177)));

    private final int auditArch;
    @SuppressWarnings("ImmutableEnumChecker")   // a Map.ofEntries: immutable, though declared as Map
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
