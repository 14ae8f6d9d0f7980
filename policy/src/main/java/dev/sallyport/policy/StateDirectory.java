package dev.sallyport.policy;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Where Sallyport keeps its state (the default CA): {@code $SALLYPORT_HOME}, else {@code ~/.local/share/sallyport}. */
public final class StateDirectory {

    private StateDirectory() {}

    public static Path resolve() {
        return resolve(System.getenv(), System.getProperty("user.home"));
    }

    /** The same, from a given environment and home folder (for tests). */
    public static Path resolve(Map<String, String> env, String userHome) {
        String home = env.get("SALLYPORT_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home).toAbsolutePath().normalize();
        }
        if (userHome == null || userHome.isBlank()) {
            throw new IllegalStateException("state directory: neither SALLYPORT_HOME nor user.home is set"
                    + " (expected: SALLYPORT_HOME=/some/folder)");
        }
        return Path.of(userHome, ".local", "share", "sallyport").toAbsolutePath().normalize();
    }

    /**
     * Publishes tmp as file (a key created once in the state folder) unless file exists already: another process
     * created it first, and theirs is kept. A hard link where the file system has them, else a move that refuses to
     * replace; tmp is left for the caller to delete.
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
