package dev.sallyport.sandbox.internal;

import java.util.List;

/**
 * The sandbox's seccomp program: a deny list on top of the namespaces. It checks the architecture first (a
 * mismatch, e.g. an i386 {@code int 0x80} call on x86_64, kills the process) and kills x32 calls; then it answers
 * {@code EPERM} for kernel interfaces a build or agent has no business with and that widen the attack surface or
 * undo the isolation (ptrace, cross-process memory, bpf, perf, keyrings, userfaultfd, namespaces, mounts, kexec,
 * modules, open_by_handle_at), {@code ENOSYS} for io_uring and clone3 (so libraries fall back to the calls this
 * filter can inspect), {@code EPERM} for {@code clone} with namespace flags, and allows {@code socket} only for
 * {@code AF_UNIX}, {@code AF_INET} and {@code AF_INET6} and never with {@code SOCK_RAW} or {@code SOCK_PACKET}
 * (plus {@code NETLINK_SOCK_DIAG}, which only the setup in {@link Inside} uses: the second program refuses it).
 *
 * <p>No call may give a file the set-user-ID or set-group-ID bit: {@code EPERM} when the mode argument of
 * {@code chmod}, {@code fchmod}, {@code fchmodat}, {@code fchmodat2}, {@code mknod}, {@code mknodat} or
 * {@code creat} carries {@code S_ISUID} or {@code S_ISGID}, and for {@code open}/{@code openat} when they create a
 * file ({@code O_CREAT} or {@code O_TMPFILE}) with such a mode (the umask cannot be relied on: it is the
 * workload's). {@code openat2} passes its mode in a struct the filter cannot read: {@code ENOSYS}, so libraries
 * fall back to {@code openat}. {@code mkdir} needs no rule: the kernel drops both bits from its mode.
 *
 * <p>bwrap applies that program to everything inside. {@link #workload} is the second program, which
 * {@link Inside} installs on the one thread that becomes the command: no netlink at all, and, when the host
 * supervises, every {@code connect(2)} handed to the host ({@code SECCOMP_RET_USER_NOTIF}, see
 * {@link ConnectSupervisor}).
 */
public final class SeccompFilter {
    static final int RET_KILL_PROCESS = 0x80000000;
    static final int RET_ALLOW = 0x7fff0000;
    static final int RET_ERRNO = 0x00050000;
    static final int RET_USER_NOTIF = 0x7fc00000;
    static final int EPERM = 1;
    static final int ENOSYS = 38;
    static final int X32_SYSCALL_BIT = 0x40000000;
    static final int OFFSET_NR = 0;
    static final int OFFSET_ARCH = 4;
    static final int OFFSET_ARG0 = 16;
    static final int OFFSET_ARG1 = 24;
    static final int OFFSET_ARG2 = 32;
    /** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
    static final int CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
            | 0x20000000 | 0x40000000;
    static final int AF_UNIX = 1;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int AF_NETLINK = 16;
    static final int NETLINK_SOCK_DIAG = 4;
    static final int SOCK_RAW = 3;
    static final int SOCK_PACKET = 10;
    static final int SOCK_TYPE_MASK = 0xf;
    static final int S_ISUID = 04000;
    static final int S_ISGID = 02000;
    /** The flags under which open/openat read their mode: O_CREAT and __O_TMPFILE (same on x86_64 and aarch64). */
    static final int OPEN_CREATES = 0100 | 020000000;

    /**
     * A call whose argument {@code modeArg} is a file mode; with {@code flagsArg >= 0} the mode counts only when
     * that argument holds {@link #OPEN_CREATES} flags.
     */
    record ModeCall(String syscall, int modeArg, int flagsArg) {
        String label() {
            return flagsArg < 0 ? "mode" + modeArg : "open" + flagsArg + "_mode" + modeArg;
        }
    }

    static final List<ModeCall> MODE_CALLS = List.of(
            new ModeCall("chmod", 1, -1), new ModeCall("fchmod", 1, -1), new ModeCall("fchmodat", 2, -1),
            new ModeCall("fchmodat2", 2, -1), new ModeCall("mknod", 1, -1), new ModeCall("mknodat", 2, -1),
            new ModeCall("creat", 1, -1), new ModeCall("open", 2, 1), new ModeCall("openat", 3, 2));

    static final List<String> DENIED_EPERM = List.of(
            "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open", "userfaultfd",
            "keyctl", "add_key", "request_key", "unshare", "setns",
            "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
            "mount_setattr", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
            "open_by_handle_at", "chroot");
    static final List<String> DENIED_ENOSYS = List.of("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3",
            "openat2");

    private SeccompFilter() {
    }

    /** The filter for the architecture this JVM runs on, as the bytes bwrap's {@code --seccomp FD} reads. */
    public static byte[] forCurrentArch() {
        return build(Arch.current());
    }

    /** {@link #workload} for the architecture this JVM runs on. */
    public static byte[] workloadForCurrentArch(boolean supervised) {
        return workload(Arch.current(), supervised);
    }

    static byte[] build(Arch arch) {
        Bpf bpf = new Bpf();
        bpf.load(OFFSET_ARCH).jumpIfEqual(arch.auditArch(), "arch_ok", "kill");
        bpf.label("arch_ok").load(OFFSET_NR);
        if (arch == Arch.X86_64) {
            bpf.jumpIfAnySet(X32_SYSCALL_BIT, "kill", null);
        }
        for (String name : DENIED_EPERM) {
            bpf.jumpIfEqual(arch.nr(name), "eperm", null);
        }
        for (String name : DENIED_ENOSYS) {
            bpf.jumpIfEqual(arch.nr(name), "enosys", null);
        }
        List<ModeCall> modeCalls = MODE_CALLS.stream().filter(c -> arch.has(c.syscall())).toList();
        for (ModeCall call : modeCalls) {
            bpf.jumpIfEqual(arch.nr(call.syscall()), call.label(), null);
        }
        bpf.jumpIfEqual(arch.nr("clone"), "clone", null);
        bpf.jumpIfEqual(arch.nr("socket"), "socket", "allow");

        bpf.label("clone").load(OFFSET_ARG0).jumpIfAnySet(CLONE_NAMESPACE_FLAGS, "eperm", "allow");

        bpf.label("socket").load(OFFSET_ARG0)
                .jumpIfEqual(AF_UNIX, "allow", null)
                .jumpIfEqual(AF_INET, "socket_type", null)
                .jumpIfEqual(AF_INET6, "socket_type", null)
                .jumpIfEqual(AF_NETLINK, "netlink", "eperm");
        // The type argument carries SOCK_NONBLOCK/SOCK_CLOEXEC in its high bits: compare the low nibble only.
        bpf.label("socket_type").load(OFFSET_ARG1).and(SOCK_TYPE_MASK)
                .jumpIfEqual(SOCK_RAW, "eperm", null)
                .jumpIfEqual(SOCK_PACKET, "eperm", "allow");

        bpf.label("netlink").load(OFFSET_ARG2).jumpIfEqual(NETLINK_SOCK_DIAG, "allow", "eperm");

        // The open family first (each jumps forward to its mode check), then one mode check per argument position.
        // The low 32 bits of an argument are enough: the kernel reads mode as umode_t and flags as int.
        List<ModeCall> opens = modeCalls.stream().filter(c -> c.flagsArg() >= 0).toList();
        for (ModeCall open : opens) {
            bpf.label(open.label()).load(argLow(open.flagsArg()))
                    .jumpIfAnySet(OPEN_CREATES, "mode" + open.modeArg(), "allow");
        }
        for (int arg : modeCalls.stream().map(ModeCall::modeArg).distinct().sorted().toList()) {
            bpf.label("mode" + arg).load(argLow(arg)).jumpIfAnySet(S_ISUID | S_ISGID, "eperm", "allow");
        }

        bpf.label("allow").ret(RET_ALLOW);
        bpf.label("eperm").ret(RET_ERRNO | EPERM);
        bpf.label("enosys").ret(RET_ERRNO | ENOSYS);
        bpf.label("kill").ret(RET_KILL_PROCESS);
        return bpf.assemble();
    }

    /**
     * The command's own program, on top of {@link #build}: {@code socket(AF_NETLINK)} refused, and with
     * {@code supervised} every {@code connect} sent to the host's supervisor.
     */
    static byte[] workload(Arch arch, boolean supervised) {
        Bpf bpf = new Bpf();
        bpf.load(OFFSET_ARCH).jumpIfEqual(arch.auditArch(), "arch_ok", "kill");
        bpf.label("arch_ok").load(OFFSET_NR);
        if (arch == Arch.X86_64) {
            bpf.jumpIfAnySet(X32_SYSCALL_BIT, "kill", null);
        }
        if (supervised) {
            bpf.jumpIfEqual(arch.nr("connect"), "notify", null);
        }
        bpf.jumpIfEqual(arch.nr("socket"), "socket", "allow");
        bpf.label("socket").load(OFFSET_ARG0).jumpIfEqual(AF_NETLINK, "eperm", "allow");
        if (supervised) {
            bpf.label("notify").ret(RET_USER_NOTIF);
        }
        bpf.label("allow").ret(RET_ALLOW);
        bpf.label("eperm").ret(RET_ERRNO | EPERM);
        bpf.label("kill").ret(RET_KILL_PROCESS);
        return bpf.assemble();
    }

    /** The offset of argument {@code n}'s low 32 bits in {@code struct seccomp_data} (little-endian). */
    private static int argLow(int n) {
        return OFFSET_ARG0 + 8 * n;
    }
}
