package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The files of the runner's start-up cache folder ({@link StoreCache}, {@link GrantsWalkRecord}): replaced whole
 * (written to a temporary file in the folder, then moved over the old one, so a reader never sees half a file),
 * read without following a link and only up to a bound. What is in them is checked by their readers; a missing or
 * unusable file only costs time.
 */
final class StartupFiles {

    private StartupFiles() {
    }

    /**
     * What a record keyed by the file {@code p} compares: its real path, device, inode, size, modification and change
     * times (a changed or replaced file has another change time or inode); "unreadable" when they cannot be read.
     */
    static String identity(Path p) {
        try {
            Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino,size,lastModifiedTime,ctime");
            return p.toRealPath() + " " + a.get("dev") + " " + a.get("ino") + " " + a.get("size") + " "
                    + ((FileTime) a.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS) + " "
                    + ((FileTime) a.get("ctime")).to(TimeUnit.NANOSECONDS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "unreadable";
        }
    }

    /** The content of {@code name} in {@code folder}, when it is there, no link, and at most {@code max} bytes. */
    static Optional<byte[]> read(Path folder, String name, int max) {
        try (InputStream in = Files.newInputStream(folder.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
            byte[] all = in.readNBytes(max + 1);
            return all.length > max ? Optional.empty() : Optional.of(all);
        } catch (IOException e) {
            return Optional.empty();   // none yet, or unreadable: computed again
        }
    }

    /** Replaces {@code name} in {@code folder} (made owner-only when missing) with {@code content}; a failure is ignored. */
    static void replace(Path folder, String name, byte[] content) {
        Path tmp = null;
        try {
            Files.createDirectories(folder, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            tmp = Files.createTempFile(folder, "." + name + "-", ".tmp");
            Files.write(tmp, content);
            Files.move(tmp, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
        } catch (IOException | UnsupportedOperationException e) {
            // not kept: the next run computes it again
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // a temporary file left in the cache folder; the next write makes its own
                }
            }
        }
    }
}
