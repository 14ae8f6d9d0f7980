package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Which socket files belong to sockets of the sandbox: asks the kernel, through a {@code NETLINK_SOCK_DIAG}
 * socket created inside (so it answers for the sandbox's network namespace only), for every unix socket there
 * with its bound file ({@code UDIAG_SHOW_VFS}: device and inode). A socket the sandbox created is in its
 * namespace; a host daemon's socket file that happens to lie in the workspace is not. The file identity is what
 * the kernel connects to, so a renamed, replaced or re-created file cannot pass for another.
 */
final class UnixPeers implements AutoCloseable {
    private static final int SOCK_DIAG_BY_FAMILY = 20;
    private static final int NLM_F_REQUEST = 0x1;
    private static final int NLM_F_DUMP = 0x300;
    private static final int NLMSG_ERROR = 2;
    private static final int NLMSG_DONE = 3;
    private static final int UDIAG_SHOW_VFS = 0x2;
    private static final int UNIX_DIAG_VFS = 1;
    private static final int NLMSG_HEADER = 16;
    private static final int UNIX_DIAG_REQ = 24;
    private static final int UNIX_DIAG_MSG = 16;
    private static final int BUFFER = 64 * 1024;

    /** A socket file: device (major, minor) and the low 32 bits of its inode, as sock_diag reports them. */
    record FileId(int major, int minor, int inode) {}

    private final int diag;
    private int sequence;

    UnixPeers(int diag) {
        this.diag = diag;
    }

    /** True when a unix socket of the sandbox is bound to the file {@code id}. */
    synchronized boolean sandboxOwns(FileId id) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment request = arena.allocate(NLMSG_HEADER + UNIX_DIAG_REQ, 4);
            request.set(ValueLayout.JAVA_INT, 0, NLMSG_HEADER + UNIX_DIAG_REQ);
            request.set(ValueLayout.JAVA_SHORT, 4, (short) SOCK_DIAG_BY_FAMILY);
            request.set(ValueLayout.JAVA_SHORT, 6, (short) (NLM_F_REQUEST | NLM_F_DUMP));
            int seq = ++sequence;
            request.set(ValueLayout.JAVA_INT, 8, seq);
            request.set(ValueLayout.JAVA_BYTE, NLMSG_HEADER, (byte) Sockets.AF_UNIX);
            request.set(ValueLayout.JAVA_INT, NLMSG_HEADER + 4, -1);            // every state
            request.set(ValueLayout.JAVA_INT, NLMSG_HEADER + 12, UDIAG_SHOW_VFS);
            Sockets.writeFully(diag, request, (int) request.byteSize());
            MemorySegment buffer = arena.allocate(BUFFER, 8);
            boolean found = false;
            while (true) {
                int n = Sockets.read(diag, buffer, BUFFER);
                for (int at = 0; at + NLMSG_HEADER <= n; ) {
                    int length = buffer.get(ValueLayout.JAVA_INT, at);
                    int type = Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, at + 4));
                    if (length < NLMSG_HEADER || at + length > n) {
                        throw new IOException("sock_diag: malformed reply (expected: netlink messages)");
                    }
                    if (buffer.get(ValueLayout.JAVA_INT, at + 8) == seq) {
                        if (type == NLMSG_DONE) {
                            return found;
                        }
                        if (type == NLMSG_ERROR) {
                            throw new IOException("sock_diag: " + Syscalls.errnoName(-buffer.get(ValueLayout.JAVA_INT,
                                    at + NLMSG_HEADER)));
                        }
                        found |= matches(buffer, at + NLMSG_HEADER + UNIX_DIAG_MSG, at + length, id);
                    }
                    at += align(length);
                }
                if (n == 0) {
                    throw new IOException("sock_diag: socket closed (expected: a reply)");
                }
            }
        }
    }

    /** Looks for a UNIX_DIAG_VFS attribute naming {@code id} among the attributes in [{@code at}, {@code end}). */
    private static boolean matches(MemorySegment buffer, int at, int end, FileId id) {
        while (at + 4 <= end) {
            int length = Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, at));
            int type = Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, at + 2));
            if (length < 4) {
                return false;
            }
            if (type == UNIX_DIAG_VFS && length >= 12) {
                int inode = buffer.get(ValueLayout.JAVA_INT, at + 4);
                int dev = buffer.get(ValueLayout.JAVA_INT, at + 8);   // the kernel's dev_t: major << 20 | minor
                if (inode == id.inode() && (dev >>> 20) == id.major() && (dev & 0xfffff) == id.minor()) {
                    return true;
                }
            }
            at += align(length);
        }
        return false;
    }

    private static int align(int n) {
        return (n + 3) & ~3;
    }

    @Override
    public void close() {
        Sockets.close(diag);
    }
}
