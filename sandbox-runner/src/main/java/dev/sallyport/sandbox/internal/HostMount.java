package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A host folder shown again under the runtime folder, where a root runner's bwrap (running as the command's
 * unprivileged uid) can reach it: {@link #idmapped} with its owner mapped to another uid
 * ({@code mount_setattr(MOUNT_ATTR_IDMAP)}, Linux 5.12+, on file systems that allow it), how the command still
 * writes a workspace that root owns while files it creates stay root's on disk (only the owner and its group are
 * mapped; files of any other uid appear as {@code nobody} and stay read-only); or {@link #plain}, unchanged, for a
 * read-only grant below folders that uid cannot pass (what root alone may read inside stays so). The idmapping
 * comes from a user namespace made for it by {@code unshare --user} (util-linux), whose maps root writes. The mount
 * is detached again by {@link #close()}.
 */
public final class HostMount implements AutoCloseable {
    private static final long AT_FDCWD = -100L;
    private static final long OPEN_TREE_CLONE = 1L;
    private static final long O_CLOEXEC = 0x80000L;
    private static final long O_RDONLY = 0L;
    private static final long AT_EMPTY_PATH = 0x1000L;
    private static final long MOUNT_ATTR_IDMAP = 0x00100000L;
    private static final long MOVE_MOUNT_F_EMPTY_PATH = 0x4L;
    private static final long MNT_DETACH = 2L;
    private static final Syscalls SYS = Syscalls.current();

    private final Path target;

    private HostMount(Path target) {
        this.target = target;
    }

    /**
     * Shows {@code source} at {@code target} (an empty folder it creates) with {@code owner}:{@code ownerGroup}
     * on disk appearing as {@code uid}:{@code gid}.
     */
    public static HostMount idmapped(Path source, Path target, int owner, int ownerGroup, int uid, int gid)
            throws IOException {
        return attach(source, target, owner + " " + uid + " 1\n", ownerGroup + " " + gid + " 1\n");
    }

    /** Shows {@code source} (a folder or a file) at {@code target} (which it creates) as it is. */
    public static HostMount plain(Path source, Path target) throws IOException {
        return attach(source, target, null, null);
    }

    private static HostMount attach(Path source, Path target, String uidMap, String gidMap) throws IOException {
        if (Files.isDirectory(source)) {
            Files.createDirectory(target);
        } else {
            Files.createFile(target);
        }
        int userns = -1;
        int tree = -1;
        try (Arena arena = Arena.ofConfined()) {
            tree = (int) Syscalls.check(SYS.call("open_tree", AT_FDCWD, arena.allocateFrom(source.toString()).address(),
                    OPEN_TREE_CLONE | O_CLOEXEC), "open_tree " + source);
            if (uidMap != null) {
                userns = userNamespace(uidMap, gidMap);
                MemorySegment attr = arena.allocate(32, 8);     // struct mount_attr { set, clr, propagation, userns_fd }
                attr.set(ValueLayout.JAVA_LONG, 0, MOUNT_ATTR_IDMAP);
                attr.set(ValueLayout.JAVA_LONG, 24, userns);
                Syscalls.check(SYS.call("mount_setattr", tree, arena.allocateFrom("").address(), AT_EMPTY_PATH,
                        attr.address(), 32), "mount_setattr(MOUNT_ATTR_IDMAP) " + source);
            }
            Syscalls.check(SYS.call("move_mount", tree, arena.allocateFrom("").address(), AT_FDCWD,
                    arena.allocateFrom(target.toString()).address(), MOVE_MOUNT_F_EMPTY_PATH), "move_mount " + target);
            return new HostMount(target);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(target);
            throw e;
        } finally {
            Sockets.close(tree);
            Sockets.close(userns);
        }
    }

    /** A user namespace with the given maps, as a descriptor; its short-lived member process is gone on return. */
    private static int userNamespace(String uidMap, String gidMap) throws IOException {
        Process helper = new ProcessBuilder("unshare", "--user", "/bin/sh", "-c", "echo ready && exec cat")
                .redirectErrorStream(true).start();
        try {
            String ready = helper.inputReader(StandardCharsets.UTF_8).readLine();
            if (!"ready".equals(ready)) {
                throw new IOException("unshare --user: " + ready + " (expected: a new user namespace; unshare(1) "
                        + "from util-linux)");
            }
            Path proc = Path.of("/proc", Long.toString(helper.pid()));
            Files.writeString(proc.resolve("uid_map"), uidMap);
            Files.writeString(proc.resolve("gid_map"), gidMap);
            try (Arena arena = Arena.ofConfined()) {
                return (int) Syscalls.check(SYS.call("openat", AT_FDCWD,
                        arena.allocateFrom(proc.resolve("ns/user").toString()).address(), O_RDONLY | O_CLOEXEC),
                        "open " + proc.resolve("ns/user"));
            }
        } finally {
            helper.getOutputStream().close();
            try {
                if (!helper.waitFor(5, TimeUnit.SECONDS)) {
                    helper.destroyForcibly();
                }
            } catch (InterruptedException e) {
                helper.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    public Path path() {
        return target;
    }

    @Override
    public void close() {
        try (Arena arena = Arena.ofConfined()) {
            SYS.call("umount2", arena.allocateFrom(target.toString()).address(), MNT_DETACH, 0);
        }
        try {
            Files.deleteIfExists(target);
        } catch (IOException e) {
            // still busy: the runtime folder's removal tries again
        }
    }
}
