package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.Held;
import dev.sallyport.sandbox.internal.WorkspaceScan.Found;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tool configs ({@link HeldNames}) as they were at the start of a run, and what {@link #settle} does with them
 * once every process of the sandbox has exited: a file with a held name that the command created, changed, replaced
 * by a link or deleted goes to the held store ({@link Held}) and the workspace gets back what was there. Nothing of it
 * is live on the host after the run until the user accepts it. A file over {@link #MAX_BYTES} at the start is not
 * copied, so a change to it is held but cannot be undone (said so).
 */
final class HeldConfigs {
    /** Held-name files larger than this at the start are compared by size and time only and not restored. */
    static final int MAX_BYTES = 1 << 20;

    /**
     * One file at the start: its content (null when too large or a link), mode and modification time; {@code link}
     * the target of a symbolic link (null for a file).
     */
    private record Original(Path path, byte[] content, int mode, long size, long modified, HeldNames.Name name,
                            String link, int uid, int gid) {}

    private final Path workspace;
    private final Map<String, Original> originals;

    private HeldConfigs(Path workspace, Map<String, Original> originals) {
        this.workspace = workspace;
        this.originals = Map.copyOf(originals);
    }

    /** Reads the regular files among {@code found} that carry a held name. */
    static HeldConfigs snapshot(Path workspace, List<Found> found) {
        Map<String, Original> originals = new LinkedHashMap<>();
        for (Found f : found) {
            if (f.held() == null || f.inNodeModules()) {
                continue;
            }
            try {
                if (f.isLink()) {
                    originals.put(workspace.relativize(f.path()).toString(), new Original(f.path(), null, 0, 0, 0,
                            f.held(), Files.readSymbolicLink(f.path()).toString(), 0, 0));
                    continue;
                }
                if ((f.mode() & WorkspaceScan.S_IFMT) != WorkspaceScan.S_IFREG) {
                    continue;
                }
                long size = Files.size(f.path());
                byte[] content = size <= MAX_BYTES ? readAtMost(f.path()) : null;
                originals.put(workspace.relativize(f.path()).toString(), new Original(f.path(), content,
                        f.mode() & 07777, size, Files.getLastModifiedTime(f.path(), LinkOption.NOFOLLOW_LINKS)
                        .toMillis(), f.held(), null,
                        (Integer) Files.getAttribute(f.path(), "unix:uid", LinkOption.NOFOLLOW_LINKS),
                        (Integer) Files.getAttribute(f.path(), "unix:gid", LinkOption.NOFOLLOW_LINKS)));
            } catch (IOException e) {
                // gone since the walk: nothing to keep
            }
        }
        return new HeldConfigs(workspace, originals);
    }

    /**
     * Holds what changed among {@code found} (the walk after the run) and the originals no longer there; returns one
     * line per held item.
     */
    List<String> settle(List<Found> found, Held store, List<String> lines) {
        Map<String, Found> now = new HashMap<>();
        for (Found f : found) {
            if (f.held() != null && !f.inNodeModules()) {
                now.put(workspace.relativize(f.path()).toString(), f);
            }
        }
        for (Map.Entry<String, Found> e : now.entrySet()) {
            Found f = e.getValue();
            Original before = originals.get(e.getKey());
            int type = f.mode() & WorkspaceScan.S_IFMT;
            if (type == WorkspaceScan.S_IFDIR) {
                continue;   // a folder with a tool config's name is not read as one
            }
            try {
                if (type == WorkspaceScan.S_IFREG && before != null && before.link() == null && unchanged(before, f)) {
                    continue;
                }
                if (type == WorkspaceScan.S_IFLNK && before != null && before.link() != null
                        && before.link().equals(Files.readSymbolicLink(f.path()).toString())) {
                    continue;
                }
                String what = before == null ? "created" : "changed";
                if (type == WorkspaceScan.S_IFREG) {
                    store.holdMoved(e.getKey(), f.path(), f.mode(), f.held().why());
                } else {
                    String target = type == WorkspaceScan.S_IFLNK ? " to " + Files.readSymbolicLink(f.path()) : "";
                    Files.delete(f.path());   // a link or other special file: nothing to propose
                    what = (before == null ? "created as a " : "replaced by a ") + typeName(type) + target;
                    lines.add(f.path() + ": " + what + " in the sandbox (" + f.held().why() + "): removed"
                            + restore(before));
                    continue;
                }
                lines.add(f.path() + ": " + what + " in the sandbox (" + f.held().why() + "): held back"
                        + restore(before));
            } catch (IOException ex) {
                lines.add(f.path() + ": " + (before == null ? "created" : "changed") + " in the sandbox ("
                        + f.held().why() + ") and NOT held back: " + ex.getMessage() + "; review it before "
                        + "working in that folder");
            }
        }
        for (Map.Entry<String, Original> e : originals.entrySet()) {
            if (now.containsKey(e.getKey())) {
                continue;
            }
            Original before = e.getValue();
            if (before.link() != null) {
                continue;   // a link gone: nothing the host obeys
            }
            try {
                store.holdDeletion(e.getKey(), before.name().why());
                lines.add(before.path() + ": deleted or moved in the sandbox (" + before.name().why() + "): held back"
                        + restore(before));
            } catch (IOException ex) {
                lines.add(before.path() + ": deleted in the sandbox and NOT held back: " + ex.getMessage());
            }
        }
        return lines;
    }

    private static boolean unchanged(Original before, Found f) throws IOException {
        if ((f.mode() & 07777) != before.mode()) {
            return false;
        }
        if (before.content() == null) {
            return Files.size(f.path()) == before.size()
                    && Files.getLastModifiedTime(f.path(), LinkOption.NOFOLLOW_LINKS).toMillis() == before.modified();
        }
        return Files.size(f.path()) == before.content().length
                && Arrays.equals(readAtMost(f.path()), before.content());
    }

    /** Puts {@code before} back; the tail of the line saying so. */
    private String restore(Original before) {
        if (before == null || before.link() != null) {
            return "";
        }
        if (before.content() == null) {
            return "; the original (over " + MAX_BYTES + " bytes) was not kept and is NOT restored";
        }
        try {
            for (Path dir = before.path().getParent(); !dir.equals(workspace); dir = dir.getParent()) {
                if (Files.isSymbolicLink(dir) || (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)
                        && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS))) {
                    return "; the original is NOT restored (" + dir + " is no longer a folder)";
                }
            }
            Held.createFolders(workspace, before.path());
            Files.deleteIfExists(before.path());
            Files.write(before.path(), before.content(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(before.path(), Held.permissions(before.mode()));
            Held.own(before.path(), before.uid(), before.gid());
            return "; the original is back";
        } catch (IOException e) {
            return "; the original is NOT restored: " + e.getMessage();
        }
    }

    private static String typeName(int type) {
        return type == WorkspaceScan.S_IFLNK ? "symbolic link" : "special file";
    }

    private static byte[] readAtMost(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            return in.readNBytes(MAX_BYTES + 1);
        }
    }
}
