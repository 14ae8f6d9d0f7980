package dev.sallyport.proxy.internal;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Key files created once: written to a temporary file first, then published under their name atomically. */
public final class PrivateFiles {

    private PrivateFiles() {}

    /**
     * Publishes tmp as file unless file exists already (another process created it first: theirs is kept); a hard
     * link where the file system has them, else a move that refuses to replace. tmp is left for the caller to delete.
     */
    public static void publishOnce(Path tmp, Path file) throws IOException {
        try {
            Files.createLink(file, tmp);   // atomic, never replaces an existing key
        } catch (FileAlreadyExistsException raced) {
            // another process created it first: use theirs
        } catch (UnsupportedOperationException | FileSystemException noLinks) {
            try {
                Files.move(tmp, file);     // no hard links here: a move that refuses to replace
            } catch (FileAlreadyExistsException raced) {
                // another process created it first: use theirs
            }
        }
    }
}
