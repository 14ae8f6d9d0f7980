package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One walk of the workspace that finds what the host may obey later: entries with a protected name
 * ({@link ProtectedPaths#NAMES}), regular files with the set-user-ID or set-group-ID bit, and socket files (a host
 * service's door, see {@link HostSockets}), wherever they lie. One {@code lstat} per
 * entry; symbolic links are never followed. Inside an entry with a protected name (mounted, or quarantined, as a
 * whole) only set-id files are looked for; in a writable {@code .git} (the workspace's own or a nested repository's)
 * the direct children are matched against {@link ProtectedPaths#IN_GIT}; elsewhere regular names are matched against
 * the tool configs held after the run ({@link HeldNames}).
 */
final class WorkspaceScan {
    static final int S_IFMT = 0170000;
    static final int S_IFREG = 0100000;
    static final int S_IFDIR = 0040000;
    static final int S_IFLNK = 0120000;
    static final int S_IFSOCK = 0140000;
    static final int SET_ID = 04000 | 02000;
    /** Package managers delete and recreate these folders: nothing inside them is mounted. */
    static final String NODE_MODULES = "node_modules";

    /** An inode: recognises an entry after the run even when the command renamed a folder above it. */
    record FileKey(long dev, long ino) {}

    /**
     * One entry the walk found: {@code name} is the protected name it matched (null for a set-id file without one);
     * {@code held} the tool config's name it matched ({@link HeldNames}; null for none); {@code covered} when it lies
     * inside an entry with a protected name; {@code inNodeModules} when a folder above it is called
     * {@code node_modules}.
     */
    record Found(Path path, FileKey key, int mode, ProtectedPaths.Name name, HeldNames.Name held, boolean covered,
                 boolean inNodeModules) {
        boolean isLink() {
            return (mode & S_IFMT) == S_IFLNK;
        }

        boolean isSetIdFile() {
            return (mode & S_IFMT) == S_IFREG && (mode & SET_ID) != 0;
        }

        boolean isSocket() {
            return (mode & S_IFMT) == S_IFSOCK;
        }

        boolean isFolder() {
            return (mode & S_IFMT) == S_IFDIR;
        }

        /** A {@code .git} folder: a repository, the workspace's own or a nested one. */
        boolean isGitFolder() {
            return name != null && name.path().equals(".git") && isFolder();
        }
    }

    /** How the walk treats a folder it cannot list. */
    interface Unreadable {
        /** Returns true when {@code dir} was made listable (and should be tried again). */
        boolean fix(Path dir, IOException e);
    }

    /** What the walk found, and the folders it could not list. */
    record Result(List<Found> found, List<Path> unlisted) {}

    /**
     * How names are matched in a folder: the workspace's names, the writable .git's, none (below the writable
     * .git's children), or none because a protected entry above is mounted (or quarantined) whole.
     */
    private enum Matching { NAMES, IN_GIT, SET_ID_ONLY, COVERED }

    /** A folder to list, how its entries are matched, and whether it is or lies below a {@code node_modules}. */
    private record Folder(Path path, Matching matching, boolean nodeModules) {}

    private WorkspaceScan() {
    }

    static Result walk(Path workspace, boolean gitWritable, HeldNames held, Unreadable unreadable) {
        List<Found> found = new ArrayList<>();
        List<Path> unlisted = new ArrayList<>();
        Set<FileKey> seen = new HashSet<>();
        Deque<Folder> folders = new ArrayDeque<>();
        folders.push(new Folder(workspace, Matching.NAMES, false));
        while (!folders.isEmpty()) {
            Folder folder = folders.pop();
            boolean inNodeModules = folder.nodeModules();
            for (Path child : list(folder.path(), unreadable, unlisted)) {
                Path relative = workspace.relativize(child);
                Found f = stat(child, relative, folder.matching(), held, inNodeModules);
                if (f == null) {
                    continue; // gone since the listing
                }
                if (f.name() != null || f.held() != null || f.isSetIdFile() || f.isSocket()) {
                    found.add(f);
                }
                if ((f.mode() & S_IFMT) == S_IFDIR && seen.add(f.key())) {
                    folders.push(new Folder(child, below(folder.matching(), f, gitWritable),
                            inNodeModules || child.getFileName().toString().equals(NODE_MODULES)));
                }
            }
        }
        return new Result(List.copyOf(found), List.copyOf(unlisted));
    }

    private static Matching below(Matching here, Found folder, boolean gitWritable) {
        if (folder.covered()) {
            return Matching.COVERED;
        }
        if (folder.name() != null) {
            // a writable repository, the workspace's or a nested one: its hooks, config, ... are protected by name
            return gitWritable && folder.isGitFolder() && !folder.inNodeModules() ? Matching.IN_GIT : Matching.COVERED;
        }
        // below the writable .git's direct children nothing is obeyed by name
        return here == Matching.NAMES ? Matching.NAMES : Matching.SET_ID_ONLY;
    }

    /** One {@code lstat} and the name the entry matches where it is; null when the entry is gone. */
    private static Found stat(Path path, Path relative, Matching matching, HeldNames held, boolean inNodeModules) {
        Map<String, Object> attrs;
        try {
            attrs = Files.readAttributes(path, "unix:mode,ino,dev", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
        int mode = (Integer) attrs.get("mode");
        ProtectedPaths.Name name = switch (matching) {
            case NAMES -> {
                ProtectedPaths.Name n = ProtectedPaths.match(relative);
                yield n == null && (mode & S_IFMT) == S_IFLNK ? ProtectedPaths.matchLink(relative) : n;
            }
            case IN_GIT -> ProtectedPaths.matchInGit(relative);
            case SET_ID_ONLY, COVERED -> null;
        };
        HeldNames.Name heldName = name == null && matching == Matching.NAMES && held != null && !inNodeModules
                ? held.match(relative, relative.getFileName().toString()) : null;
        if (heldName == null && name == null && matching == Matching.NAMES && held != null && !inNodeModules
                && (mode & S_IFMT) == S_IFLNK) {
            heldName = held.holder(relative);
        }
        return new Found(path, new FileKey((Long) attrs.get("dev"), (Long) attrs.get("ino")), mode, name, heldName,
                matching == Matching.COVERED, inNodeModules);
    }

    private static List<Path> list(Path dir, Unreadable unreadable, List<Path> unlisted) {
        for (int attempt = 0; attempt < 2; attempt++) {
            List<Path> children = new ArrayList<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
                stream.forEach(children::add);
                return children;
            } catch (AccessDeniedException e) {
                if (attempt == 0 && unreadable.fix(dir, e)) {
                    continue;
                }
                unlisted.add(dir);
                return List.of();
            } catch (IOException | java.io.UncheckedIOException e) {
                unlisted.add(dir);
                return List.of();
            }
        }
        unlisted.add(dir);
        return List.of();
    }

    /** The key of {@code path} itself (a link is not followed). */
    static FileKey keyOf(Path path) throws IOException {
        Map<String, Object> attrs = Files.readAttributes(path, "unix:ino,dev", LinkOption.NOFOLLOW_LINKS);
        return new FileKey((Long) attrs.get("dev"), (Long) attrs.get("ino"));
    }
}
