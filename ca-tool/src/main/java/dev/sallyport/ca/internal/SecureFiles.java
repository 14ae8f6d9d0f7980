package dev.sallyport.ca.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Creating files and folders with restrictive permissions from the start (no chmod after the fact). */
public final class SecureFiles {
    /** {@code rw-------}: private key files. */
    public static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
    /** {@code rwx------}: the CA folder. */
    public static final Set<PosixFilePermission> OWNER_RWX = PosixFilePermissions.fromString("rwx------");
    /** {@code rw-r--r--}: public certificates. */
    public static final Set<PosixFilePermission> PUBLIC_READ = PosixFilePermissions.fromString("rw-r--r--");

    private SecureFiles() {
    }

    private static boolean posix(Path p) {
        return p.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /** Creates {@code dir} (and missing parents) with mode 0700 if it does not exist. */
    public static void createPrivateDirectories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        if (posix(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_RWX));
        } else {
            Files.createDirectories(dir);
        }
    }

    /**
     * Writes a new file that must not exist yet ({@code CREATE_NEW}, atomic), created with {@code mode}, and
     * forces it to disk.
     *
     * @throws java.nio.file.FileAlreadyExistsException if it exists
     */
    public static void writeNew(Path file, byte[] content, Set<PosixFilePermission> mode) throws IOException {
        Set<OpenOption> options = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        FileAttribute<?>[] attributes = posix(file)
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(mode)}
                : new FileAttribute<?>[0];
        try (FileChannel channel = FileChannel.open(file, options, attributes)) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
    }
}
