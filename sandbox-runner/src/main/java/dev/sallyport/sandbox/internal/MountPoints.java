package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a folder is the root of a mount: what a walk that deletes or changes owners must not enter (the runtime
 * folder can hold an {@link HostMount} of the user's workspace). {@code statx}'s {@code STATX_ATTR_MOUNT_ROOT}
 * (Linux 5.8), else the mount table; a bind mount of the same file system shows no other device number, so
 * comparing devices would not do.
 */
final class MountPoints {
    private static final long AT_FDCWD = -100L;
    private static final long AT_SYMLINK_NOFOLLOW = 0x100L;
    private static final long STATX_ATTR_MOUNT_ROOT = 0x2000L;
    private static final Syscalls SYS = Syscalls.current();

    private MountPoints() {
    }

    static boolean isMountRoot(Path dir) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment stx = arena.allocate(256, 8);
            Syscalls.check(SYS.call("statx", AT_FDCWD, arena.allocateFrom(dir.toString()).address(),
                    AT_SYMLINK_NOFOLLOW, 0, stx.address()), "statx " + dir);
            long attributes = stx.get(ValueLayout.JAVA_LONG, 8);
            long known = stx.get(ValueLayout.JAVA_LONG, 56);
            if ((known & STATX_ATTR_MOUNT_ROOT) != 0) {
                return (attributes & STATX_ATTR_MOUNT_ROOT) != 0;
            }
        }
        String wanted = dir.toAbsolutePath().normalize().toString().replace(" ", "\\040");
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] fields = line.split(" ");
            if (fields.length > 4 && fields[4].equals(wanted)) {
                return true;
            }
        }
        return false;
    }
}
