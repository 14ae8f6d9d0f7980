package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.Held;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Makes a repository the command created in the workspace (a clone, {@code git init}, a submodule's git folder)
 * harmless for the host's git while keeping it a repository: objects, refs, index and work tree stay; what git would
 * run or follow is held back ({@link Held}) with one line each: hooks other than git's {@code *.sample} files, the
 * config keys outside {@link GitConfigFilter}'s allow-list, a {@code commondir} pointing outside the workspace.
 * The same for the git folders below it ({@code modules/}, {@code worktrees/}).
 */
final class GitNeutraliser {
    /** What a config becomes when the host's git cannot read it. */
    static final String MINIMAL_CONFIG = "[core]\n\trepositoryformatversion = 0\n";
    private static final int MAX_DEPTH = 8;

    private final Path workspace;
    private final Held store;
    private final List<String> lines;
    private final Set<Path> done = new HashSet<>();

    GitNeutraliser(Path workspace, Held store, List<String> lines) {
        this.workspace = workspace;
        this.store = store;
        this.lines = lines;
    }

    /** A {@code .git} folder the command created. */
    void repository(Path gitDir) {
        repository(gitDir, 0);
    }

    /**
     * A {@code .git} file the command created: true when git follows it to a folder inside the workspace (now made
     * harmless) or to nothing git accepts; false when it points outside, for the caller to quarantine.
     */
    boolean gitFile(Path file) {
        String text;
        try {
            text = new String(readAtMost(file, 4096), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return false;
        }
        if (!text.startsWith("gitdir:")) {
            return true;   // git refuses such a file ("invalid gitfile format")
        }
        Path target = inside(file.getParent(), text.substring("gitdir:".length()).strip());
        if (target == null || !Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        repository(target, 0);
        return true;
    }

    private void repository(Path gitDir, int depth) {
        if (depth > MAX_DEPTH || !done.add(gitDir)) {
            return;
        }
        hooks(gitDir.resolve("hooks"));
        config(gitDir.resolve("config"), true);
        config(gitDir.resolve("config.worktree"), false);
        commondir(gitDir, depth);
        for (Path worktree : folders(gitDir.resolve("worktrees"))) {
            config(worktree.resolve("config.worktree"), false);
            commondir(worktree, depth);
        }
        modules(gitDir.resolve("modules"), depth);
    }

    private void modules(Path dir, int depth) {
        for (Path child : folders(dir)) {
            if (Files.isRegularFile(child.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)) {
                repository(child, depth + 1);
            } else if (depth < MAX_DEPTH) {
                modules(child, depth + 1);   // a submodule named a/b lives in modules/a/b
            }
        }
    }

    private void hooks(Path hooks) {
        if (Files.isSymbolicLink(hooks)) {
            remove(hooks, "a symbolic link in place of git's hooks folder");
            return;
        }
        if (!Files.isDirectory(hooks, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        for (Path hook : entries(hooks)) {
            String name = hook.getFileName().toString();
            if (name.endsWith(".sample")) {
                continue;
            }
            if (Files.isSymbolicLink(hook)) {
                remove(hook, "a git hook (a symbolic link, git would run its target)");
            } else if (Files.isRegularFile(hook, LinkOption.NOFOLLOW_LINKS)) {
                hold(hook, "git runs it as the " + name + " hook");
            }
        }
    }

    private void config(Path file, boolean required) {
        if (Files.isSymbolicLink(file)) {
            remove(file, "git's config as a symbolic link");
            if (required) {
                writeConfig(file, MINIMAL_CONFIG);
            }
            return;
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            byte[] original = Files.readAllBytes(file);
            int mode = (Integer) Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            var entries = GitConfigFilter.read(file);
            String rel = workspace.relativize(file).toString();
            if (entries.isEmpty()) {
                store.hold(rel, original, mode, "the host's git could not read it here");
                writeConfig(file, required ? MINIMAL_CONFIG : "");
                lines.add(file + ": a git config the host's git cannot read (or no git here to read it): held back "
                        + "whole" + (required ? ", replaced by a minimal one" : ", emptied"));
                return;
            }
            List<GitConfigFilter.Entry> kept = new ArrayList<>();
            Set<String> removed = new java.util.LinkedHashSet<>();
            for (GitConfigFilter.Entry e : entries.get()) {
                if (GitConfigFilter.allowed(e)) {
                    kept.add(e);
                } else {
                    removed.add(e.key());
                }
            }
            if (removed.isEmpty()) {
                return;
            }
            String text = GitConfigFilter.write(kept);
            store.hold(rel, original, mode, "git obeys " + String.join(", ", removed));
            writeConfig(file, text);
            if (!GitConfigFilter.read(file).map(kept::equals).orElse(false)) {
                writeConfig(file, required ? MINIMAL_CONFIG : "");
            }
            lines.add(file + ": removed what the host's git would run or follow (" + String.join(", ", removed)
                    + "); the original is held back");
        } catch (IOException e) {
            lines.add(file + ": a git config written in the sandbox and NOT checked: " + e.getMessage()
                    + "; read it before running git in that folder");
        }
    }

    private void commondir(Path gitDir, int depth) {
        Path file = gitDir.resolve("commondir");
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        String text;
        try {
            text = Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                    ? new String(readAtMost(file, 4096), StandardCharsets.UTF_8).strip() : "";
        } catch (IOException e) {
            text = "";
        }
        Path target = text.isEmpty() ? null : inside(gitDir, text);
        if (target != null && Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            repository(target, depth + 1);
            return;
        }
        if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            hold(file, "git reads config and hooks from the folder it names, outside the workspace");
        } else {
            remove(file, "git's commondir, not a file");
        }
    }

    /** {@code path} (relative to {@code base}, or absolute) when it lies inside the workspace with no link on the way. */
    private Path inside(Path base, String path) {
        try {
            Path resolved = base.resolve(path).normalize();
            if (!resolved.startsWith(workspace) || !Files.exists(resolved, LinkOption.NOFOLLOW_LINKS)) {
                return null;
            }
            Path real = workspace.toRealPath().resolve(workspace.relativize(resolved));
            return resolved.toRealPath().equals(real) ? resolved : null;
        } catch (IOException | java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    private void hold(Path file, String why) {
        try {
            int mode = (Integer) Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            store.holdMoved(workspace.relativize(file).toString(), file, mode, why);
            lines.add(file + ": " + why + ": held back");
        } catch (IOException e) {
            lines.add(file + ": " + why + " and NOT held back: " + e.getMessage() + "; delete it before running git "
                    + "in that folder");
        }
    }

    private void remove(Path link, String what) {
        try {
            String target = Files.isSymbolicLink(link) ? " to " + Files.readSymbolicLink(link) : "";
            Files.delete(link);
            lines.add(link + ": " + what + target + ": removed");
        } catch (IOException e) {
            lines.add(link + ": " + what + " and NOT removed: " + e.getMessage() + "; delete it before running git "
                    + "in that folder");
        }
    }

    private void writeConfig(Path file, String text) {
        try {
            Files.deleteIfExists(file);
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            Held.ownLike(file, file.getParent());     // the repository's owner, not a root runner
        } catch (IOException e) {
            lines.add(file + ": NOT rewritten: " + e.getMessage() + "; delete it before running git in that folder");
        }
    }

    private static List<Path> folders(Path dir) {
        return entries(dir).stream().filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList();
    }

    private static List<Path> entries(Path dir) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            stream.forEach(out::add);
        } catch (IOException e) {
            // unreadable: the walk reports folders it could not list
        }
        out.sort(null);
        return out;
    }

    private static byte[] readAtMost(Path file, int max) throws IOException {
        try (var in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            return in.readNBytes(max);
        }
    }
}
