package dev.sallyport.sandbox.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the last walk of the grants for socket files ({@link HostSockets}) found, kept in the runner's start-up cache
 * folder so that the next run with the same grants checks each folder with one {@code statx} instead of listing all
 * of them again (a walk of tool folders under the home lists a few hundred thousand entries: about 0.3 s of system
 * CPU here).
 *
 * <p>Each folder is recorded with its device, inode and change time ({@code ctime}). A socket file cannot appear in
 * a folder, and a folder cannot be replaced, renamed in or mounted over, without changing the folder's {@code ctime}
 * or the device and inode at its path; no call lets a user set a {@code ctime}. So when every recorded folder still
 * has its device, inode and change time, the folders hold the entries they held, and the recorded socket files are
 * all there are. A record is only written when every folder's change time lies well before the walk began (a change
 * during the walk, or within the file system clock's granularity of it, would otherwise go unseen), and only used
 * when it names the same grants. Anything else, or a record that cannot be read, means a full walk.
 *
 * <p>The file: a head and the grants, then per folder its device, inode, change time and NUL-ended path, per socket
 * file its NUL-ended path, then an end mark; the paths are handed to {@code statx} where they lie in the file's
 * bytes (a run checks some ten thousand folders, much of it before the JIT has compiled anything).
 */
final class GrantsWalkRecord {
    static final String FILE = "grants-walk.cache";
    private static final byte[] HEAD = "sallyport grants walk 2\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte FOLDER = 'd';
    private static final byte SOCKET = 's';
    private static final byte END = 'e';
    /** A folder changed this close to the walk's start (or after it) is not recorded: clocks and granularity. */
    private static final long RACY_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Bigger than any tool folder's record: a bigger file is not ours. */
    private static final int MAX_SIZE = 64 << 20;
    private static final Syscalls SYS = Syscalls.current();
    private static final long AT_FDCWD = -100;
    private static final long AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int STATX_TYPE = 0x1;
    private static final int STATX_CTIME = 0x80;
    private static final int STATX_INO = 0x100;
    private static final int WANTED = STATX_TYPE | STATX_INO | STATX_CTIME;
    private static final long STATX_SIZE = 256;
    private static final int S_IFMT = 0xF000;
    private static final int S_IFDIR = 0x4000;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private GrantsWalkRecord() {
    }

    /** A folder as recorded: where, and what {@link #stat} saw there. */
    record Folder(Path path, Stat stat) {
    }

    /** A folder's device, inode and change time in nanoseconds. */
    record Stat(long dev, long ino, long ctimeNanos) {
    }

    /** The folder at {@code path} (not followed if a link), or empty when it is none or cannot be read. */
    static Optional<Stat> stat(Path path) {
        byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        byte[] name = Arrays.copyOf(bytes, bytes.length + 1);   // NUL-ended
        try (Stater stater = new Stater()) {
            MemorySegment c = stater.arena.allocate(name.length);
            MemorySegment.copy(name, 0, c, ValueLayout.JAVA_BYTE, 0, name.length);
            return stater.stat(c.address());
        }
    }

    /** One {@code statx} after another into buffers kept for all of them. */
    private static final class Stater implements AutoCloseable {
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment stx = arena.allocate(STATX_SIZE, 8);
        private final MemorySegment state = Syscalls.callState(arena);

        /** The folder whose NUL-ended path lies at {@code name}, or empty when it is none or cannot be read. */
        Optional<Stat> stat(long name) {
            if (SYS.call(state, "statx", AT_FDCWD, name, AT_SYMLINK_NOFOLLOW, WANTED, stx.address()).failed()
                    || (stx.get(ValueLayout.JAVA_INT, 0) & WANTED) != WANTED
                    || (Short.toUnsignedInt(stx.get(ValueLayout.JAVA_SHORT, 28)) & S_IFMT) != S_IFDIR) {
                return Optional.empty();
            }
            long dev = ((long) stx.get(ValueLayout.JAVA_INT, 136) << 32)
                    | Integer.toUnsignedLong(stx.get(ValueLayout.JAVA_INT, 140));
            long ctime = stx.get(ValueLayout.JAVA_LONG, 96) * 1_000_000_000L
                    + Integer.toUnsignedLong(stx.get(ValueLayout.JAVA_INT, 104));
            return Optional.of(new Stat(dev, stx.get(ValueLayout.JAVA_LONG, 32), ctime));
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /**
     * The socket files of the walk recorded in {@code cache} for {@code roots}, when every folder it recorded is
     * unchanged; empty when there is no such record or anything changed.
     */
    static Optional<List<Path>> recall(Path cache, List<Path> roots) {
        Optional<byte[]> read = StartupFiles.read(cache, FILE, MAX_SIZE);
        byte[] head = head(roots);
        if (read.isEmpty() || read.get().length < head.length
                || !Arrays.equals(read.get(), 0, head.length, head, 0, head.length)) {
            return Optional.empty();
        }
        List<Path> sockets = new ArrayList<>();
        try (Stater stater = new Stater()) {
            MemorySegment file = stater.arena.allocate(read.get().length);
            MemorySegment.copy(read.get(), 0, file, ValueLayout.JAVA_BYTE, 0, read.get().length);
            long at = head.length;
            while (file.get(ValueLayout.JAVA_BYTE, at) != END) {
                byte kind = file.get(ValueLayout.JAVA_BYTE, at);
                long name = at + (kind == FOLDER ? 25 : 1);
                int length = Short.toUnsignedInt(file.get(SHORT, name));
                if ((kind != FOLDER && kind != SOCKET) || file.get(ValueLayout.JAVA_BYTE, name + 2 + length) != 0) {
                    return Optional.empty();
                }
                if (kind == SOCKET) {
                    sockets.add(Path.of(new String(read.get(), (int) name + 2, length, StandardCharsets.UTF_8)));
                } else if (!stater.stat(file.address() + name + 2).equals(Optional.of(
                        new Stat(file.get(LONG, at + 1), file.get(LONG, at + 9), file.get(LONG, at + 17))))) {
                    return Optional.empty();
                }
                at = name + 2 + length + 1;
            }
            return at + 1 == file.byteSize() ? Optional.of(sockets) : Optional.empty();
        } catch (IndexOutOfBoundsException malformed) {
            return Optional.empty();
        }
    }

    /**
     * Records a walk of {@code roots} begun at {@code startMillis} that saw {@code folders} (each root among them)
     * and found {@code sockets}; nothing is written when a folder changed too close to the start, or a path is too
     * long for the record. A failure only costs the next run a full walk.
     */
    static void remember(Path cache, List<Path> roots, long startMillis, List<Folder> folders, List<Path> sockets) {
        long racy = TimeUnit.MILLISECONDS.toNanos(startMillis) - RACY_NANOS;
        ByteBuffer out = ByteBuffer.allocate(1 << 16);
        out = put(out, head(roots));
        for (Folder f : folders) {
            if (f.stat().ctimeNanos() >= racy) {
                return;
            }
            out = room(out, 25).put(FOLDER).putLong(f.stat().dev()).putLong(f.stat().ino())
                    .putLong(f.stat().ctimeNanos());
            out = putPath(out, f.path());
            if (out == null) {
                return;
            }
        }
        for (Path s : sockets) {
            out = putPath(room(out, 1).put(SOCKET), s);
            if (out == null) {
                return;
            }
        }
        room(out, 1).put(END);
        StartupFiles.replace(cache, FILE, Arrays.copyOf(out.array(), out.position()));
    }

    /** The head of a record for {@code roots}: each path after its length (a path holds anything but NUL). */
    private static byte[] head(List<Path> roots) {
        StringBuilder line = new StringBuilder();
        for (Path r : roots) {
            String p = r.toAbsolutePath().normalize().toString();
            line.append(p.length()).append(':').append(p).append(' ');
        }
        byte[] grants = line.append('\0').toString().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(HEAD.length + grants.length).put(HEAD).put(grants).array();
    }

    /** {@code out} with the path's length, bytes and a NUL; null when the path is too long for a record. */
    private static ByteBuffer putPath(ByteBuffer out, Path path) {
        byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        if (bytes.length > 0xFFFF) {
            return null;
        }
        return room(out, 2 + bytes.length + 1).putShort((short) bytes.length).put(bytes).put((byte) 0);
    }

    private static ByteBuffer put(ByteBuffer out, byte[] bytes) {
        return room(out, bytes.length).put(bytes);
    }

    /** {@code out}, or a copy twice as big when it has less than {@code more} bytes left. */
    private static ByteBuffer room(ByteBuffer out, int more) {
        if (out.remaining() >= more) {
            return out;
        }
        ByteBuffer bigger = ByteBuffer.allocate(Math.max(out.capacity() * 2, out.position() + more));
        return bigger.put(out.flip());
    }
}
