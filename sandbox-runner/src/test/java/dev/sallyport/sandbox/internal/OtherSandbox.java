package dev.sallyport.sandbox.internal;

import java.io.IOException;

/**
 * Stands in for a sandbox around ours that holds a seccomp notification listener (container managers that
 * intercept system calls do): {@code java OtherSandbox COMMAND...} installs, with the project's {@link Seccomp}, a
 * program on its main thread that hands {@code kexec_load} to a listener it keeps open and allows everything else,
 * then runs {@code COMMAND} from that thread (which inherits the program) and exits with its status.
 */
final class OtherSandbox {
    /** The status when the listener cannot be installed: the test cannot reproduce the nested case here. */
    static final int NO_LISTENER = 3;

    private OtherSandbox() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (Syscalls.current().call("geteuid", 0, 0, 0).value() != 0) {
            Landlock.forCurrentArch().setNoNewPrivileges();     // without CAP_SYS_ADMIN seccomp needs it
        }
        if (!(Seccomp.installWithListener(program(Arch.current())) instanceof Seccomp.Listener.Installed)) {
            System.err.println("other sandbox: seccomp(NEW_LISTENER): refused (expected: a listener, Linux 5.0+)");
            System.exit(NO_LISTENER);
        }
        // the listener stays open in this process for as long as the command runs
        Process command = new ProcessBuilder(args).inheritIO().start();
        System.exit(command.waitFor());
    }

    private static byte[] program(Arch arch) {
        Bpf bpf = new Bpf();
        bpf.load(SeccompFilter.OFFSET_NR).jumpIfEqual(arch.nr("kexec_load"), "notify", "allow");
        bpf.label("notify").ret(SeccompFilter.RET_USER_NOTIF);
        bpf.label("allow").ret(SeccompFilter.RET_ALLOW);
        return bpf.assemble();
    }
}
