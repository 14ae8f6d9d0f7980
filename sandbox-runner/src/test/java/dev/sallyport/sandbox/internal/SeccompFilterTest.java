package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** Runs the assembled program in a small classic-BPF interpreter, byte by byte as the kernel would read it. */
class SeccompFilterTest {
    static final int AUDIT_ARCH_I386 = 0x40000003;
    static final int AUDIT_ARCH_ARM = 0x40000028;

    /** Interprets a seccomp program against one {@code struct seccomp_data}. */
    static int evaluate(byte[] program, int arch, int nr, long... args) {
        ByteBuffer data = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        data.putInt(0, nr).putInt(4, arch);
        for (int i = 0; i < args.length; i++) {
            data.putLong(16 + 8 * i, args[i]);
        }
        ByteBuffer code = ByteBuffer.wrap(program).order(ByteOrder.LITTLE_ENDIAN);
        int acc = 0;
        int pc = 0;
        for (int steps = 0; steps < 10_000; steps++) {
            int base = pc * 8;
            assertThat(base).as("pc inside the program").isLessThan(program.length);
            int op = Short.toUnsignedInt(code.getShort(base));
            int jt = Byte.toUnsignedInt(code.get(base + 2));
            int jf = Byte.toUnsignedInt(code.get(base + 3));
            int k = code.getInt(base + 4);
            switch (op) {
                case Bpf.LD_W_ABS -> {
                    assertThat(k % 4).isZero();
                    acc = data.getInt(k);
                    pc++;
                }
                case Bpf.AND_K -> {
                    acc &= k;
                    pc++;
                }
                case Bpf.JEQ_K -> pc += 1 + (acc == k ? jt : jf);
                case Bpf.JSET_K -> pc += 1 + ((acc & k) != 0 ? jt : jf);
                case Bpf.RET_K -> {
                    return k;
                }
                default -> throw new AssertionError("unexpected opcode 0x" + Integer.toHexString(op) + " at " + pc);
            }
        }
        throw new AssertionError("program did not return");
    }

    static final int ALLOW = SeccompFilter.RET_ALLOW;
    static final int EPERM = SeccompFilter.RET_ERRNO | SeccompFilter.EPERM;
    static final int ENOSYS = SeccompFilter.RET_ERRNO | SeccompFilter.ENOSYS;
    static final int KILL = SeccompFilter.RET_KILL_PROCESS;

    @ParameterizedTest
    @EnumSource(Arch.class)
    void deniesTheListedCallsAndAllowsOthers(Arch arch) {
        byte[] p = SeccompFilter.build(arch);
        int a = arch.auditArch();
        for (String name : SeccompFilter.DENIED_EPERM) {
            assertThat(evaluate(p, a, arch.nr(name))).as(name).isEqualTo(EPERM);
        }
        for (String name : SeccompFilter.DENIED_ENOSYS) {
            assertThat(evaluate(p, a, arch.nr(name))).as(name).isEqualTo(ENOSYS);
        }
        for (String name : new String[] {"openat", "close", "prctl", "landlock_create_ruleset",
                "landlock_add_rule", "landlock_restrict_self"}) {
            assertThat(evaluate(p, a, arch.nr(name))).as(name).isEqualTo(ALLOW);
        }
    }

    @ParameterizedTest
    @EnumSource(Arch.class)
    void cloneIsAllowedForThreadsAndProcessesButNotNamespaces(Arch arch) {
        byte[] p = SeccompFilter.build(arch);
        int clone = arch.nr("clone");
        long thread = 0x003d0f00L; // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
        assertThat(evaluate(p, arch.auditArch(), clone, thread)).isEqualTo(ALLOW);
        assertThat(evaluate(p, arch.auditArch(), clone, 0x11 /* SIGCHLD */)).isEqualTo(ALLOW);
        for (long ns : new long[] {0x10000000L, 0x40000000L, 0x20000000L, 0x00020000L, 0x08000000L, 0x04000000L,
                0x02000000L}) {
            assertThat(evaluate(p, arch.auditArch(), clone, 0x11 | ns)).as("flag 0x%x", ns).isEqualTo(EPERM);
        }
    }

    @ParameterizedTest
    @EnumSource(Arch.class)
    void socketsOnlyUnixAndInetWithoutRaw(Arch arch) {
        byte[] p = SeccompFilter.build(arch);
        int socket = arch.nr("socket");
        int a = arch.auditArch();
        long cloexecNonblock = 0x80000 | 0x800;
        assertThat(evaluate(p, a, socket, 1, 1)).isEqualTo(ALLOW);                    // AF_UNIX stream
        assertThat(evaluate(p, a, socket, 2, 1 | cloexecNonblock)).isEqualTo(ALLOW);  // AF_INET stream
        assertThat(evaluate(p, a, socket, 10, 2)).isEqualTo(ALLOW);                   // AF_INET6 dgram
        assertThat(evaluate(p, a, socket, 2, 3)).isEqualTo(EPERM);                    // SOCK_RAW
        assertThat(evaluate(p, a, socket, 10, 3 | cloexecNonblock)).isEqualTo(EPERM);
        assertThat(evaluate(p, a, socket, 2, 10)).isEqualTo(EPERM);                   // SOCK_PACKET
        for (long family : new long[] {17 /* packet */, 16 /* netlink */, 40 /* vsock */, 38 /* alg */, 31 /* bt */}) {
            assertThat(evaluate(p, a, socket, family, 1)).as("family %d", family).isEqualTo(EPERM);
        }
    }

    @ParameterizedTest
    @EnumSource(Arch.class)
    void noModeArgumentMayCarrySetuidOrSetgid(Arch arch) {
        byte[] p = SeccompFilter.build(arch);
        int a = arch.auditArch();
        long creates = 0100 | 01; // O_CREAT | O_WRONLY
        long tmpfile = 020000000 | 0200000 | 02; // O_TMPFILE (with O_DIRECTORY) | O_RDWR
        int checked = 0;
        for (SeccompFilter.ModeCall call : SeccompFilter.MODE_CALLS) {
            if (!arch.has(call.syscall())) {
                continue;
            }
            checked++;
            int nr = arch.nr(call.syscall());
            long flags = call.flagsArg() < 0 ? 0 : creates;
            for (long mode : new long[] {04755, 02755, 06777, 04000, 02000, (1L << 32) | 04755}) {
                assertThat(evaluate(p, a, nr, args(call, flags, mode))).as("%s mode %o", call.syscall(), mode)
                        .isEqualTo(EPERM);
            }
            for (long mode : new long[] {0755, 0644, 01777, 0, (1L << 32) | 0755}) {
                assertThat(evaluate(p, a, nr, args(call, flags, mode))).as("%s mode %o", call.syscall(), mode)
                        .isEqualTo(ALLOW);
            }
            if (call.flagsArg() >= 0) {
                // Without O_CREAT/O_TMPFILE the kernel ignores the mode: opening an existing file stays allowed.
                assertThat(evaluate(p, a, nr, args(call, 0, 04755))).as(call.syscall() + " O_RDONLY").isEqualTo(ALLOW);
                assertThat(evaluate(p, a, nr, args(call, 02 | 01000, 06755))).as(call.syscall() + " O_RDWR|O_TRUNC")
                        .isEqualTo(ALLOW);
                assertThat(evaluate(p, a, nr, args(call, tmpfile, 02755))).as(call.syscall() + " O_TMPFILE")
                        .isEqualTo(EPERM);
            }
        }
        assertThat(checked).as("mode calls on " + arch).isEqualTo(arch == Arch.X86_64 ? 9 : 5);
        assertThat(evaluate(p, a, arch.nr("openat2"))).as("openat2 (mode in a struct)").isEqualTo(ENOSYS);
    }

    /** Arguments for {@code call} with {@code flags} and {@code mode} in their places (0 elsewhere). */
    private static long[] args(SeccompFilter.ModeCall call, long flags, long mode) {
        long[] args = new long[4];
        args[call.modeArg()] = mode;
        if (call.flagsArg() >= 0) {
            args[call.flagsArg()] = flags;
        }
        return args;
    }

    @ParameterizedTest
    @EnumSource(Arch.class)
    void netlinkOnlyForSockDiagWhichTheCommandsOwnProgramRefuses(Arch arch) {
        int socket = arch.nr("socket");
        int a = arch.auditArch();
        byte[] base = SeccompFilter.build(arch);
        assertThat(evaluate(base, a, socket, 16, 3, 4)).as("setup's NETLINK_SOCK_DIAG").isEqualTo(ALLOW);
        assertThat(evaluate(base, a, socket, 16, 3 | 0x80000, 4)).isEqualTo(ALLOW);
        for (long protocol : new long[] {0 /* route */, 9 /* audit */, 15 /* kobject uevent */, 16 /* generic */}) {
            assertThat(evaluate(base, a, socket, 16, 3, protocol)).as("netlink %d", protocol).isEqualTo(EPERM);
        }
        for (boolean supervised : new boolean[] {true, false}) {
            byte[] command = SeccompFilter.workload(arch, supervised);
            assertThat(evaluate(command, a, socket, 16, 3, 4)).isEqualTo(EPERM);
            assertThat(evaluate(command, a, socket, 1, 1)).isEqualTo(ALLOW);
            assertThat(evaluate(command, a, socket, 2, 1)).isEqualTo(ALLOW);
        }
    }

    @ParameterizedTest
    @EnumSource(Arch.class)
    void theCommandsProgramHandsEveryConnectToTheHostWhenSupervised(Arch arch) {
        int a = arch.auditArch();
        byte[] supervised = SeccompFilter.workload(arch, true);
        byte[] plain = SeccompFilter.workload(arch, false);
        assertThat(evaluate(supervised, a, arch.nr("connect"), 3, 0x1000, 110)).isEqualTo(SeccompFilter.RET_USER_NOTIF);
        assertThat(evaluate(plain, a, arch.nr("connect"), 3, 0x1000, 110)).isEqualTo(ALLOW);
        for (String name : new String[] {"sendto", "sendmsg", "bind", "accept4", "read", "execve"}) {
            assertThat(evaluate(supervised, a, arch.nr(name))).as(name).isEqualTo(ALLOW);
        }
        int other = arch == Arch.X86_64 ? AUDIT_ARCH_I386 : AUDIT_ARCH_ARM;
        assertThat(evaluate(supervised, other, 1)).isEqualTo(KILL);
    }

    @Test
    void otherArchitecturesAndX32AreKilled() {
        byte[] p = SeccompFilter.build(Arch.X86_64);
        assertThat(evaluate(p, AUDIT_ARCH_I386, 1)).isEqualTo(KILL);
        assertThat(evaluate(p, Arch.AARCH64.auditArch(), 1)).isEqualTo(KILL);
        assertThat(evaluate(p, Arch.X86_64.auditArch(), 0x40000000 | 41)).isEqualTo(KILL);
        assertThat(evaluate(p, Arch.X86_64.auditArch(), 0x40000000 | 1)).isEqualTo(KILL);
        assertThat(evaluate(p, Arch.X86_64.auditArch(), 1)).isEqualTo(ALLOW);
        byte[] arm = SeccompFilter.build(Arch.AARCH64);
        assertThat(evaluate(arm, AUDIT_ARCH_ARM, 1)).isEqualTo(KILL);
        assertThat(evaluate(arm, Arch.X86_64.auditArch(), 1)).isEqualTo(KILL);
    }

    @Test
    void programStartsWithTheArchitectureCheck() {
        byte[] p = SeccompFilter.build(Arch.X86_64);
        ByteBuffer code = ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(p.length % 8).isZero();
        assertThat(code.getShort(0)).isEqualTo((short) Bpf.LD_W_ABS);
        assertThat(code.getInt(4)).isEqualTo(4);                     // seccomp_data.arch
        assertThat(code.getShort(8)).isEqualTo((short) Bpf.JEQ_K);
        assertThat(code.getInt(12)).isEqualTo(0xC000003E);           // AUDIT_ARCH_X86_64
        assertThat(p.length / 8).isLessThan(100);
    }

    @Test
    void assemblerRefusesUnknownAndBackwardLabels() {
        assertThatThrownBy(() -> new Bpf().jumpIfEqual(1, "nowhere", null).assemble())
                .hasMessageContaining("nowhere: not defined");
        assertThatThrownBy(() -> new Bpf().label("x").jumpIfEqual(1, "x", null).ret(0).assemble())
                .hasMessageContaining("(expected: 0..255, forward)");
    }
}
