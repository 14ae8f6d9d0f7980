package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.Held;
import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.internal.WorkspaceScan.FileKey;
import dev.sallyport.sandbox.internal.WorkspaceScan.Found;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Names inside the workspace that the host obeys later (git's repositories and hooks, editor tasks, dev containers,
 * agent configs that start programs, direnv, shell rc files): the one list ({@link #NAMES}, {@link #IN_GIT}) and how
 * a run protects them. Before the run every existing one is bound read-only onto itself, at any depth (outside
 * {@code node_modules}), with the folders above it pinned (bound onto themselves) so they cannot be renamed away
 * and replaced; each absent name at the root is created as a read-only mask (an empty file where the name is a
 * file, an empty folder where it is a folder) and removed again after the run. A name that does not exist yet
 * below the root cannot be mounted in advance: {@link AfterRunCheck} quarantines whatever appeared during the run.
 */
public final class ProtectedPaths {
    /** What the name is on disk, and so what its mask is. */
    public enum Kind { FILE, FOLDER }

    /** Where a name counts: only at the workspace root, or in every folder. */
    public enum Scope { ROOT, ANYWHERE }

    /**
     * One protected name: {@code path} relative to the workspace, components separated by {@code /}, or
     * {@code *suffix} for a pattern (never masked); {@code why} says what on the host obeys it.
     */
    public record Name(String path, Kind kind, Scope scope, String why) {
        public Name {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(scope, "scope");
            if (path.isEmpty() || path.startsWith("/") || path.endsWith("/") || path.contains("//")) {
                throw new IllegalArgumentException("path: '" + path + "' (expected: a relative path or *suffix)");
            }
        }

        boolean isPattern() {
            return path.startsWith("*");
        }

        /** What a mask of this name holds: JSON configs an empty object, git's commondir "." (the repository itself). */
        String maskContent() {
            if (path.endsWith(".json")) {
                return "{}\n";
            }
            return path.equals(".git/commondir") ? ".\n" : "";
        }

        boolean matches(Path relative) {
            return matches(relative, relative.getFileName().toString());
        }

        /** {@link #matches(Path)} given the entry's own name ({@code relative}'s last): the walk asks every name. */
        boolean matches(Path relative, String last) {
            int n = relative.getNameCount();
            if (isPattern()) {
                int suffix = path.length() - 1;
                return last.length() > suffix && last.regionMatches(last.length() - suffix, path, 1, suffix)
                        && (scope == Scope.ANYWHERE || n == 1);
            }
            int start = path.length() - last.length();
            if (start < 0 || !path.endsWith(last) || (start > 0 && path.charAt(start - 1) != '/')) {
                return false;       // not this name's last segment: what nearly every entry of a walk is
            }
            String[] parts = path.split("/");
            if (n < parts.length || (scope == Scope.ROOT && n != parts.length) || !last.equals(parts[parts.length - 1])) {
                return false;
            }
            for (int i = 0; i < parts.length - 1; i++) {
                if (!relative.getName(n - parts.length + i).toString().equals(parts[i])) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Protected in every workspace. */
    public static final List<Name> NAMES = List.of(
            anywhere(".git", Kind.FOLDER, "git runs hooks and the programs its config names (core.fsmonitor, "
                    + "core.pager, aliases), also in nested repositories"),
            anywhere(".gitmodules", Kind.FILE, "git clones and checks out what it names"),
            anywhere(".vscode", Kind.FOLDER, "VS Code runs its tasks and launch configurations"),
            anywhere(".idea", Kind.FOLDER, "JetBrains IDEs run its run configurations and tools"),
            anywhere(".devcontainer", Kind.FOLDER, "dev container tools build and start what it names"),
            anywhere(".devcontainer.json", Kind.FILE, "dev container tools build and start what it names"),
            anywhere("*.code-workspace", Kind.FILE, "VS Code runs the tasks of a workspace file"),
            anywhere(".mcp.json", Kind.FILE, "coding agents start the MCP servers it names"),
            anywhere(".claude/settings.json", Kind.FILE, "Claude Code runs its hooks and MCP servers"),
            anywhere(".claude/settings.local.json", Kind.FILE, "Claude Code runs its hooks and MCP servers"),
            anywhere(".cursor/mcp.json", Kind.FILE, "Cursor starts the MCP servers it names"),
            anywhere(".gemini/settings.json", Kind.FILE, "Gemini CLI starts the MCP servers it names"),
            anywhere(".amazonq/mcp.json", Kind.FILE, "Amazon Q starts the MCP servers it names"),
            root(".bashrc"), root(".bash_profile"), root(".bash_login"), root(".profile"), root(".zshrc"),
            root(".zshenv"), root(".zprofile"), root(".zlogin"),
            new Name(".gitconfig", Kind.FILE, Scope.ROOT, "git reads it when the workspace is a home folder"));
    /** Protected inside every {@code .git} folder when the command may write {@code .git} (gitWritable). */
    public static final List<Name> IN_GIT = List.of(
            inGit("hooks", Kind.FOLDER, "git runs its hooks"),
            inGit("config", Kind.FILE, "git runs the programs it names"),
            inGit("info", Kind.FOLDER, "git reads its attributes and excludes"),
            inGit("commondir", Kind.FILE, "git reads config and hooks from the folder it names"),
            inGit("config.worktree", Kind.FILE, "git runs the programs it names"),
            inGit("worktrees", Kind.FOLDER, "git reads config and hooks through the worktrees it holds"),
            inGit("modules", Kind.FOLDER, "git runs the hooks and config of the submodules it holds"));
    /**
     * Links in place of the folders that hold protected files ({@code .claude} for {@code .claude/settings.json}):
     * a tool opening that folder would follow the link to files the walk never sees under a protected name.
     */
    static final List<Name> HOLDERS = NAMES.stream().filter(n -> n.scope() == Scope.ANYWHERE && n.path().contains("/"))
            .map(n -> n.path().substring(0, n.path().indexOf('/'))).distinct()
            .map(dir -> anywhere(dir, Kind.FOLDER, "a link in its place points tools at settings elsewhere")).toList();
    /** More protected entries than this at the start is refused (each is a mount). */
    static final int MAX_MOUNTS = 1000;

    /** One read-only mount over the workspace. */
    public sealed interface Entry {
        Path path();
    }

    /** An entry that was there before the run, bound read-only onto itself. */
    public record Existing(Path path) implements Entry {}

    /** A mask this run created on the host for an absent name, bound read-only onto itself, removed after the run. */
    public record Mask(Path path, Kind kind, String content) implements Entry {}

    /**
     * What a run mounts, and what it knew at the start.
     *
     * <p>{@code pinned}: folders bound writable onto themselves so they cannot be renamed (the writable
     * {@code .git}, the folders above protected entries), shallowest first; {@code readOnly}: entries bound
     * read-only onto themselves; {@code created}: folders made on the host to hold masks; {@code known}: the file
     * keys of everything bound at the start; {@code sockets}: the socket files the walk found outside
     * {@code node_modules}, which {@link HostSockets} covers.
     */
    public static final class Plan {
        final Path workspace;
        final boolean gitWritable;
        final List<Path> pinned;
        final List<Entry> readOnly;
        final List<Path> created;
        final Set<FileKey> known;
        final List<Path> sockets;
        final HeldNames heldNames;
        final HeldConfigs held;
        final Held store;

        @SuppressWarnings("checkstyle:ParameterNumber")
        Plan(Path workspace, boolean gitWritable, List<Path> pinned, List<Entry> readOnly, List<Path> created,
             Set<FileKey> known, List<Path> sockets, HeldNames heldNames, HeldConfigs held, Held store) {
            this.workspace = workspace;
            this.gitWritable = gitWritable;
            this.pinned = List.copyOf(pinned);
            this.readOnly = List.copyOf(readOnly);
            this.created = List.copyOf(created);
            this.known = Set.copyOf(known);
            this.sockets = List.copyOf(sockets);
            this.heldNames = heldNames;
            this.held = held;
            this.store = store;
        }

        /** The folders bound writable onto themselves, shallowest first (mount them before {@link #readOnlyPaths}). */
        public List<Path> pinnedPaths() {
            return pinned;
        }

        /** The entries bound read-only onto themselves, in mount order. */
        public List<Path> readOnlyPaths() {
            return readOnly.stream().map(Entry::path).toList();
        }

        /** Exclude lines for the file masks at the root, so a git inside does not offer to commit them. */
        public List<String> gitExcludes() {
            List<String> lines = new ArrayList<>();
            for (Entry e : readOnly) {
                if (e instanceof Mask m && m.kind() == Kind.FILE && !inGitFolder(workspace.relativize(m.path()))) {
                    lines.add("/" + workspace.relativize(m.path()));
                }
            }
            return lines;
        }
    }

    private ProtectedPaths() {
    }

    private static boolean inGitFolder(Path relative) {
        for (Path part : relative) {
            if (part.toString().equals(".git")) {
                return true;
            }
        }
        return false;
    }

    /** The name {@code relative} (a path inside the workspace) matches, or null. */
    static Name match(Path relative) {
        return first(NAMES, relative);
    }

    /** The {@link #IN_GIT} name {@code relative} (a direct child of a writable .git, at any depth) matches, or null. */
    static Name matchInGit(Path relative) {
        return first(IN_GIT, Path.of(".git", relative.getFileName().toString()));
    }

    /** The holder folder name a symbolic link at {@code relative} stands in for, or null. */
    static Name matchLink(Path relative) {
        return first(HOLDERS, relative);
    }

    private static Name first(List<Name> names, Path relative) {
        String last = relative.getFileName().toString();
        for (Name name : names) {
            if (name.matches(relative, last)) {
                return name;
            }
        }
        return null;
    }

    /**
     * Walks the workspace, binds what exists, creates the masks for what does not, and reads the tool configs that
     * {@code heldNames} names (kept in {@code store} after the run when the command changed them). With
     * {@code gitWritable} every repository's {@code .git} folder (the workspace's and nested ones) is writable but for
     * its {@link #IN_GIT} entries. The masks exist on the host from here on: the caller removes them with
     * {@link #removeMasks} whatever happens next.
     */
    public static Plan prepare(Path workspace, boolean gitWritable, HeldNames heldNames, Held store)
            throws SandboxException {
        WorkspaceScan.Result scan = WorkspaceScan.walk(workspace, gitWritable, heldNames, (dir, e) -> false);
        Set<Path> pinned = new TreeSet<>(Comparator.comparingInt(Path::getNameCount).thenComparing(Path::compareTo));
        Set<FileKey> known = new HashSet<>();
        List<Entry> readOnly = new ArrayList<>();
        List<Path> sockets = new ArrayList<>();
        List<Path> repositories = new ArrayList<>();
        for (Found f : scan.found()) {
            if (f.inNodeModules()) {
                continue;
            }
            if (gitWritable && f.isGitFolder()) {
                repositories.add(f.path());     // writable, pinned, its IN_GIT entries masked below
                continue;
            }
            if (f.isSocket() && f.name() == null) {
                sockets.add(f.path());      // covered by BwrapCommand, not a protected entry
                continue;
            }
            if (f.name() == null && !f.isSetIdFile()) {
                continue;   // a tool config: read below, checked after the run
            }
            if (f.name() != null && f.isLink()) {
                throw new SandboxException("workspace: " + f.path() + " is a symbolic link (expected: a regular file "
                        + "or folder; protected paths are mounted read-only and a link would point the mount elsewhere)");
            }
            known.add(f.key());
            if (f.covered()) {
                continue; // a set-id file inside a protected entry that is mounted whole
            }
            readOnly.add(new Existing(f.path()));
            if (f.name() != null) {
                pinAncestors(workspace, f.path(), pinned);
            }
        }
        if (readOnly.size() > MAX_MOUNTS) {
            throw new SandboxException("workspace: " + workspace + " holds " + readOnly.size() + " protected entries "
                    + "(expected: at most " + MAX_MOUNTS + "; each is a mount; move nested repositories, editor "
                    + "folders or set-id files out, or run in a subfolder)");
        }
        HeldConfigs held = HeldConfigs.snapshot(workspace, scan.found());
        List<Path> created = new ArrayList<>();
        try {
            for (Path git : repositories) {
                pinned.add(git);
                pinAncestors(workspace, git, pinned);
                known.add(WorkspaceScan.keyOf(git));
            }
            for (Name name : NAMES) {
                mask(workspace, name, name.path(), readOnly, created, pinned, known);
            }
            for (Path git : repositories) {
                String relative = workspace.relativize(git).toString();
                for (Name name : IN_GIT) {
                    mask(workspace, name, relative + name.path().substring(".git".length()), readOnly, created, pinned,
                            known);
                }
            }
        } catch (IOException | SandboxException e) {
            removeMasks(new Plan(workspace, gitWritable, List.copyOf(pinned), readOnly, created, known, sockets,
                    heldNames, held, store));
            if (e instanceof SandboxException se) {
                throw se;
            }
            throw new SandboxException("workspace: cannot create the mask for a protected path: " + e.getMessage()
                    + " (expected: a writable workspace)", e);
        }
        return new Plan(workspace, gitWritable, List.copyOf(pinned), readOnly, created, known, sockets, heldNames,
                held, store);
    }

    private static void mask(Path workspace, Name name, String relative, List<Entry> readOnly, List<Path> created,
                             Set<Path> pinned, Set<FileKey> known) throws IOException, SandboxException {
        if (name.isPattern()) {
            return;
        }
        Path path = workspace.resolve(relative);
        for (Path dir = path.getParent(); !dir.equals(workspace); dir = dir.getParent()) {
            if (Files.isSymbolicLink(dir)) {
                throw new SandboxException("workspace: " + dir + " is a symbolic link (expected: a folder; "
                        + relative + " inside it is mounted read-only and a link would point the mount elsewhere)");
            }
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                return; // the name cannot exist below a file; if one appears, the check after the run finds it
            }
        }
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return; // bound as it is
        }
        List<Path> parents = new ArrayList<>();
        for (Path dir = path.getParent(); !dir.equals(workspace); dir = dir.getParent()) {
            parents.addFirst(dir);
        }
        for (Path dir : parents) {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(dir);
                created.add(dir);
            }
            pinned.add(dir);
        }
        if (name.kind() == Kind.FOLDER) {
            Files.createDirectory(path);
        } else {
            Files.writeString(path, name.maskContent(), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
        }
        readOnly.add(new Mask(path, name.kind(), name.maskContent()));
        known.add(WorkspaceScan.keyOf(path));
    }

    /** Pins every folder between the workspace and {@code entry} (both excluded). */
    private static void pinAncestors(Path workspace, Path entry, Set<Path> pinned) {
        for (Path dir = entry.getParent(); dir != null && !dir.equals(workspace); dir = dir.getParent()) {
            pinned.add(dir);
        }
    }

    /** Removes the masks this run created when they still hold what it put there, then the folders made for them. */
    public static void removeMasks(Plan plan) {
        for (Entry e : plan.readOnly.reversed()) {
            if (!(e instanceof Mask m)) {
                continue;
            }
            try {
                if (m.kind() == Kind.FOLDER) {
                    deleteIfEmptyFolder(m.path());
                } else if (Files.isRegularFile(m.path(), LinkOption.NOFOLLOW_LINKS)
                        && Files.readString(m.path(), StandardCharsets.UTF_8).equals(m.content())) {
                    Files.delete(m.path());
                }
            } catch (IOException | java.io.UncheckedIOException ignored) {
                // still mounted or changed by someone else: leave it
            }
        }
        for (Path dir : plan.created.reversed()) {
            try {
                deleteIfEmptyFolder(dir);
            } catch (IOException ignored) {
                // holds something now: leave it
            }
        }
    }

    private static void deleteIfEmptyFolder(Path dir) throws IOException {
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            try (var children = Files.list(dir)) {
                if (children.findAny().isEmpty()) {
                    Files.delete(dir);
                }
            }
        }
    }

    private static Name anywhere(String path, Kind kind, String why) {
        return new Name(path, kind, Scope.ANYWHERE, why);
    }

    private static Name root(String rcFile) {
        return new Name(rcFile, Kind.FILE, Scope.ROOT, "shells run it when the workspace is a home folder");
    }

    private static Name inGit(String path, Kind kind, String why) {
        return new Name(".git/" + path, kind, Scope.ROOT, why);
    }
}
