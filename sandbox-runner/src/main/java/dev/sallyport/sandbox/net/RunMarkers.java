package dev.sallyport.sandbox.net;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * One small file per running sandbox ({@code <dir>/<id>} holding the runner's pid), so that
 * {@code sallyport cleanup} removes only what crashed runs left and never the network of a live one.
 */
public final class RunMarkers {

    /** Where the runner keeps its markers by default (tmpfs: gone after a reboot, like the bridges). */
    public static final Path DEFAULT_DIR = Path.of("/run/sallyport/vm");

    private final Path dir;

    public RunMarkers(Path dir) {
        this.dir = Objects.requireNonNull(dir, "dir");
    }

    /** Records that this process runs sandbox {@code id}. */
    public void mark(String id) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(id), Long.toString(ProcessHandle.current().pid()));
    }

    /** Forgets sandbox {@code id}. */
    public void unmark(String id) throws IOException {
        Files.deleteIfExists(dir.resolve(id));
    }

    /** Ids whose runner process is still alive. */
    public Set<String> liveIds() throws IOException {
        Set<String> live = new HashSet<>();
        if (!Files.isDirectory(dir)) {
            return live;
        }
        try (DirectoryStream<Path> markers = Files.newDirectoryStream(dir)) {
            for (Path marker : markers) {
                if (alive(marker)) {
                    live.add(marker.getFileName().toString());
                }
            }
        }
        return live;
    }

    private static boolean alive(Path marker) throws IOException {
        try {
            long pid = Long.parseLong(Files.readString(marker).strip());
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        } catch (NumberFormatException | NoSuchFileException e) {
            return false;
        }
    }
}
