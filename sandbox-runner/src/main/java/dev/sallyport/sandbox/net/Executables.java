package dev.sallyport.sandbox.net;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Finds programs on the PATH (plus the sbin folders a root shell would search). */
public final class Executables {

    private static final List<String> EXTRA = List.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
            "/sbin", "/bin");

    private Executables() {
    }

    /** The first executable named {@code name} on the PATH or in the sbin/bin folders. */
    public static Optional<Path> find(String name) {
        return find(name, List.of());
    }

    /** As {@link #find(String)}, searching {@code extraDirs} after the PATH. */
    public static Optional<Path> find(String name, List<String> extraDirs) {
        for (String dir : searchPath(extraDirs)) {
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static List<String> searchPath(List<String> extraDirs) {
        List<String> dirs = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (!dir.isEmpty()) {
                    dirs.add(dir);
                }
            }
        }
        dirs.addAll(extraDirs);
        dirs.addAll(EXTRA);
        return dirs;
    }
}
