package dev.sallyport.sandbox;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Where a host path lies among the folders a sandbox may write, compared by their real paths (links resolved). */
public final class WritableFolders {

    private WritableFolders() {
    }

    /** The first of {@code writable} that holds {@code path} (or is it), if any. */
    public static Optional<Path> holding(Path path, List<Path> writable) {
        Path real = real(path);
        return writable.stream().filter(w -> real.startsWith(real(w))).findFirst();
    }

    /** {@code p} with the links of its longest existing part resolved. */
    static Path real(Path p) {
        Path absolute = p.toAbsolutePath().normalize();
        for (Path existing = absolute; existing != null; existing = existing.getParent()) {
            try {
                return existing.toRealPath().resolve(existing.relativize(absolute));
            } catch (IOException e) {
                // not there (yet): try the folder above
            }
        }
        return absolute;
    }
}
