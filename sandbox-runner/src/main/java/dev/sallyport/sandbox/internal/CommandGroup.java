package dev.sallyport.sandbox.internal;

import java.util.Optional;

/**
 * The command's process group, as the host reaches it. bwrap's {@code --new-session} makes its init (the sandbox's
 * pid 1) a session and group leader, and the command and its children are in that group unless they make groups
 * of their own; a session leader's group cannot change, and lives as long as the sandbox. The host holds a pidfd on
 * that leader, found from a process of the group ({@link #of(int)}), so a signal never reaches a process that merely
 * took a freed pid. The init ignores what it has no handler for (the kernel drops such signals to a namespace's
 * init), so only the command and its children see them.
 */
final class CommandGroup implements AutoCloseable {
    static final int SIGWINCH = 28;
    /** {@code pidfd_send_signal} to the group the pidfd's process leads (Linux 6.9). */
    private static final int PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2;
    private static final Syscalls SYS = Syscalls.current();

    private final int leader;
    private int pidfd;

    private CommandGroup(int leader, int pidfd) {
        this.leader = leader;
        this.pidfd = pidfd;
    }

    /**
     * The group of {@code member} (a living process, by its pid in the host's namespace), held by a pidfd on its
     * leader; empty when that leader is gone or the kernel has no pidfds (before Linux 5.3).
     */
    static Optional<CommandGroup> of(int member) {
        Syscalls.Result group = SYS.call("getpgid", member, 0, 0);
        if (group.failed()) {
            return Optional.empty();
        }
        int leader = (int) group.value();
        // A group's id is its leader's pid, and is not handed out again while the group has a member.
        Syscalls.Result pidfd = SYS.call("pidfd_open", leader, 0, 0);
        return pidfd.failed() ? Optional.empty() : Optional.of(new CommandGroup(leader, (int) pidfd.value()));
    }

    /** The leader's pid, in the host's namespace. */
    int leader() {
        return leader;
    }

    /** Sends {@code signal} to every process of the group; nothing once the leader is gone or this is closed. */
    synchronized void signal(int signal) {
        if (pidfd < 0) {
            return;
        }
        Syscalls.Result sent = SYS.call("pidfd_send_signal", pidfd, signal, 0, PIDFD_SIGNAL_PROCESS_GROUP, 0);
        if (sent.failed() && sent.errno() == Syscalls.EINVAL
                && !SYS.call("pidfd_send_signal", pidfd, 0, 0, 0, 0).failed()) {
            // Before Linux 6.9: the leader lives, so its pid still names its group.
            SYS.call("kill", -leader, signal, 0);
        }
    }

    @Override
    public synchronized void close() {
        Sockets.close(pidfd);
        pidfd = -1;
    }
}
