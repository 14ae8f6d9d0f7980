package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Hands open file descriptors from one process to another over a connected unix socket ({@code SCM_RIGHTS}):
 * how the sandbox's listening socket and its seccomp listener reach the host. A message is a few bytes of payload
 * plus the descriptors; the receiver gets them close-on-exec. Layouts are those of LP64 Linux (x86_64, aarch64).
 */
final class FdPassing {
    /** What arrived: the payload and the descriptors, in the order they were sent. */
    record Message(byte[] payload, int[] fds) {}

    private static final int SCM_RIGHTS = 1;
    private static final int MSG_CTRUNC = 0x8;
    private static final int MSG_CMSG_CLOEXEC = 0x40000000;
    private static final int MSGHDR_SIZE = 56;
    private static final int CMSGHDR_SIZE = 16;
    private static final Syscalls SYS = Syscalls.current();

    private FdPassing() {
    }

    static void send(int socket, byte[] payload, int... fds) throws IOException {
        if (payload.length == 0) {
            throw new IllegalArgumentException("payload: empty (expected: at least one byte to carry the descriptors)");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_BYTE, payload);
            int controlLength = CMSGHDR_SIZE + align(4 * fds.length);
            MemorySegment control = arena.allocate(controlLength, 8);
            control.set(ValueLayout.JAVA_LONG, 0, CMSGHDR_SIZE + 4L * fds.length);
            control.set(ValueLayout.JAVA_INT, 8, Sockets.SOL_SOCKET);
            control.set(ValueLayout.JAVA_INT, 12, SCM_RIGHTS);
            for (int i = 0; i < fds.length; i++) {
                control.set(ValueLayout.JAVA_INT, CMSGHDR_SIZE + 4L * i, fds[i]);
            }
            MemorySegment msg = header(arena, data, payload.length, fds.length == 0 ? MemorySegment.NULL : control,
                    fds.length == 0 ? 0 : controlLength);
            long sent = Syscalls.check(SYS.call("sendmsg", socket, msg.address(), 0), "sendmsg");
            if (sent != payload.length) {
                throw new IOException("sendmsg: sent " + sent + " of " + payload.length + " bytes (expected: all)");
            }
        }
    }

    /** Receives one message of at most {@code maxPayload} bytes and {@code maxFds} descriptors. */
    static Message receive(int socket, int maxPayload, int maxFds) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(maxPayload, 8);
            int controlLength = CMSGHDR_SIZE + align(4 * maxFds);
            MemorySegment control = arena.allocate(controlLength, 8);
            MemorySegment msg = header(arena, data, maxPayload, control, controlLength);
            long got;
            while (true) {
                Syscalls.Result r = SYS.call("recvmsg", socket, msg.address(), MSG_CMSG_CLOEXEC);
                if (!r.failed()) {
                    got = r.value();
                    break;
                }
                if (r.errno() != Syscalls.EINTR) {
                    throw new IOException("recvmsg: " + Syscalls.errnoName(r.errno()));
                }
            }
            int[] fds = descriptors(control, msg.get(ValueLayout.JAVA_LONG, 40));
            if ((msg.get(ValueLayout.JAVA_INT, 48) & MSG_CTRUNC) != 0) {
                for (int fd : fds) {
                    Sockets.close(fd);
                }
                throw new IOException("recvmsg: more than " + maxFds + " descriptors (expected: at most " + maxFds + ")");
            }
            byte[] payload = data.asSlice(0, got).toArray(ValueLayout.JAVA_BYTE);
            return new Message(payload, fds);
        }
    }

    private static int[] descriptors(MemorySegment control, long controlLength) {
        if (controlLength < CMSGHDR_SIZE || control.get(ValueLayout.JAVA_INT, 8) != Sockets.SOL_SOCKET
                || control.get(ValueLayout.JAVA_INT, 12) != SCM_RIGHTS) {
            return new int[0];
        }
        int count = (int) ((control.get(ValueLayout.JAVA_LONG, 0) - CMSGHDR_SIZE) / 4);
        int[] fds = new int[count];
        for (int i = 0; i < count; i++) {
            fds[i] = control.get(ValueLayout.JAVA_INT, CMSGHDR_SIZE + 4L * i);
        }
        return fds;
    }

    private static MemorySegment header(Arena arena, MemorySegment data, long dataLength, MemorySegment control,
                                        long controlLength) {
        MemorySegment iov = arena.allocate(16, 8);
        iov.set(ValueLayout.JAVA_LONG, 0, data.address());
        iov.set(ValueLayout.JAVA_LONG, 8, dataLength);
        MemorySegment msg = arena.allocate(MSGHDR_SIZE, 8);
        msg.set(ValueLayout.JAVA_LONG, 16, iov.address());
        msg.set(ValueLayout.JAVA_LONG, 24, 1);
        msg.set(ValueLayout.JAVA_LONG, 32, control.address());
        msg.set(ValueLayout.JAVA_LONG, 40, controlLength);
        return msg;
    }

    private static int align(int n) {
        return (n + 7) & ~7;
    }
}
