package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Makes a connect the supervisor decided to allow, on the command's own socket, from a host thread. A unix
 * socket's peer records the connecting thread's credentials ({@code SO_PEERCRED}): when the host runs as root and
 * the command as another uid, the thread takes the command's uid and gid for the call ({@code setresuid} and
 * {@code setresgid} as raw system calls act on the calling thread only) and takes root back after, so a server
 * inside that checks its client's uid sees the command's, not root's.
 */
final class OnBehalf {
    private static final Syscalls SYS = Syscalls.current();

    private final HostLink.Rules rules;
    private final boolean switchCredentials;

    OnBehalf(HostLink.Rules rules, boolean hostIsRoot) {
        this.rules = rules;
        this.switchCredentials = hostIsRoot && rules.workloadUid() != 0;
    }

    /** {@code connect(socket, address)}: 0 or a negated errno. */
    long connect(int socket, byte[] address, boolean unix) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocateFrom(ValueLayout.JAVA_BYTE, address);
            if (!(unix && switchCredentials)) {
                return result(SYS.call("connect", socket, addr.address(), address.length));
            }
            if (SYS.call("setresgid", -1, rules.workloadGid(), -1).failed()) {
                return -Syscalls.EPERM;
            }
            try {
                if (SYS.call("setresuid", -1, rules.workloadUid(), -1).failed()) {
                    return -Syscalls.EPERM;
                }
                try {
                    return result(SYS.call("connect", socket, addr.address(), address.length));
                } finally {
                    restore("setresuid");
                }
            } finally {
                restore("setresgid");
            }
        }
    }

    private static void restore(String call) {
        if (SYS.call(call, -1, 0, -1).failed()) {
            // A thread that cannot become root again must not serve anyone else.
            throw new IllegalStateException(call + ": cannot take root back on this thread (expected: success)");
        }
    }

    private static long result(Syscalls.Result r) {
        return r.failed() ? -r.errno() : 0;
    }
}
