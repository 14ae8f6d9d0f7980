package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resolves the path a sandboxed process gave to {@code connect(2)} the way the kernel would for it, but by the
 * host and once: against the process's own root and working folder ({@code /proc/PID/root}, {@code cwd}), with
 * symbolic links kept inside that root ({@code openat2(RESOLVE_IN_ROOT)}), to an {@code O_PATH} descriptor of
 * the file. The host then checks and connects to exactly that file (through {@code /proc/thread-self/fd/N}), so
 * nothing the process changes meanwhile (its memory, its links, its folders) can redirect the connection.
 */
final class UnixTarget {
    private static final long O_PATH = 0x200000L;
    private static final long O_DIRECTORY = 0x10000L;
    private static final long O_CLOEXEC = 0x80000L;
    private static final long AT_FDCWD = -100L;
    private static final long AT_EMPTY_PATH = 0x1000L;
    private static final long RESOLVE_NO_MAGICLINKS = 0x02L;
    private static final long RESOLVE_IN_ROOT = 0x10L;
    private static final int STATX_TYPE = 0x1;
    private static final int STATX_INO = 0x100;
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    private static final Syscalls SYS = Syscalls.current();

    /** A resolved socket file: its descriptor (owned by the caller) and its identity. */
    record Resolved(int fd, UnixPeers.FileId id) implements AutoCloseable {
        /** The address that connects to exactly this file from the calling process. */
        String viaProc() {
            return "/proc/thread-self/fd/" + fd;
        }

        @Override
        public void close() {
            Sockets.close(fd);
        }
    }

    /** Why a path did not resolve to a socket: the errno connect(2) answers. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final int errno;

        Refused(int errno, String message) {
            super(message);
            this.errno = errno;
        }

        int errno() {
            return errno;
        }
    }

    private UnixTarget() {
    }

    /** Opens the root and working folder of {@code pid}; call {@link #resolve} while the process still waits. */
    static Dirs dirs(int pid) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int root = (int) Syscalls.check(SYS.call("openat", AT_FDCWD,
                    arena.allocateFrom("/proc/" + pid + "/root").address(), O_PATH | O_DIRECTORY | O_CLOEXEC),
                    "open /proc/" + pid + "/root");
            String cwd;
            try {
                cwd = Files.readSymbolicLink(Path.of("/proc/" + pid + "/cwd")).toString();
            } catch (IOException e) {
                Sockets.close(root);
                throw e;
            }
            return new Dirs(root, cwd);
        }
    }

    /** The process's root (a descriptor) and working folder (as a path inside that root). */
    record Dirs(int root, String cwd) implements AutoCloseable {
        @Override
        public void close() {
            Sockets.close(root);
        }
    }

    /** Resolves {@code path} (the bytes of {@code sun_path}) for the process whose folders are {@code dirs}. */
    static Resolved resolve(Dirs dirs, byte[] path) throws Refused {
        String name = new String(path, StandardCharsets.UTF_8);
        String absolute;
        if (name.startsWith("/")) {
            absolute = name;
        } else if (dirs.cwd().startsWith("/") && !dirs.cwd().endsWith(" (deleted)")) {
            absolute = dirs.cwd() + "/" + name;
        } else {
            throw new Refused(Syscalls.ENOENT, "working folder " + dirs.cwd() + " is gone");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment how = arena.allocate(24, 8);      // struct open_how { flags, mode, resolve }
            how.set(ValueLayout.JAVA_LONG, 0, O_PATH | O_CLOEXEC);
            how.set(ValueLayout.JAVA_LONG, 16, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
            Syscalls.Result fd = SYS.call("openat2", dirs.root(), arena.allocateFrom(absolute).address(),
                    how.address(), 24, 0);
            if (fd.failed()) {
                throw new Refused(fd.errno(), absolute + ": " + Syscalls.errnoName(fd.errno()));
            }
            MemorySegment stx = arena.allocate(256, 8);
            Syscalls.Result st = SYS.call("statx", fd.value(), arena.allocateFrom("").address(), AT_EMPTY_PATH,
                    STATX_TYPE | STATX_INO, stx.address());
            int mode = Short.toUnsignedInt(stx.get(ValueLayout.JAVA_SHORT, 28));
            if (st.failed() || (mode & S_IFMT) != S_IFSOCK) {
                Sockets.close((int) fd.value());
                throw new Refused(Syscalls.ECONNREFUSED, absolute + ": not a socket");
            }
            UnixPeers.FileId id = new UnixPeers.FileId(stx.get(ValueLayout.JAVA_INT, 136),
                    stx.get(ValueLayout.JAVA_INT, 140), (int) stx.get(ValueLayout.JAVA_LONG, 32));
            return new Resolved((int) fd.value(), id);
        }
    }

    /** True when this kernel has what resolving needs ({@code openat2}, Linux 5.6). */
    static boolean available() {
        return SYS.call("openat2", -1, 0, 0, 0, 0).errno() != Syscalls.ENOSYS;
    }
}
