package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.internal.WorkspaceScan.Found;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs once every process of the sandbox has exited: walks the workspace again and makes harmless what the command
 * left for the host to obey. A repository created during the run stays one, with what its git would run or follow
 * held back ({@link GitNeutraliser}); a tool config created, changed or deleted is held back and the original put
 * back ({@link HeldConfigs}). Any other entry with a protected name that was not mounted at the start (created during
 * the run, or planted where one was after moving a folder away) is renamed to {@code NAME.sallyport-quarantine};
 * a regular file with the set-user-ID or set-group-ID bit that was not there at the start loses both bits. A
 * folder the command made unreadable is opened for the walk (owner permissions) and closed again. Each action and
 * each folder that could not be checked is one line for the user.
 */
public final class AfterRunCheck {
    static final String QUARANTINE_SUFFIX = ".sallyport-quarantine";
    /** Lines reported one by one; the rest are counted. */
    static final int MAX_LINES = 50;
    private static final Set<PosixFilePermission> OWNER_ALL = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private final ProtectedPaths.Plan plan;
    /** Folders opened for the walk, with the permissions to restore. */
    private final Map<Path, Set<PosixFilePermission>> opened = new LinkedHashMap<>();
    private final List<String> lines = new ArrayList<>();

    private AfterRunCheck(ProtectedPaths.Plan plan) {
        this.plan = plan;
    }

    /** Removes the run's masks, then checks; returns the lines to show (empty when nothing was found). */
    public static List<String> run(ProtectedPaths.Plan plan) {
        ProtectedPaths.removeMasks(plan);
        return new AfterRunCheck(plan).check();
    }

    private List<String> check() {
        WorkspaceScan.Result scan = WorkspaceScan.walk(plan.workspace, plan.gitWritable, plan.heldNames, this::open);
        List<Found> renames = new ArrayList<>();
        List<Path> repositories = new ArrayList<>();
        List<Found> gitFiles = new ArrayList<>();
        for (Found f : scan.found()) {
            if (plan.known.contains(f.key())) {
                continue;
            }
            if (f.isSetIdFile()) {
                clearSetId(f);
            }
            if (f.isGitFolder()) {
                repositories.add(f.path());     // kept a repository, made harmless below
            } else if (f.name() != null && f.name().path().equals(".git")
                    && (f.mode() & WorkspaceScan.S_IFMT) == WorkspaceScan.S_IFREG) {
                gitFiles.add(f);
            } else if (f.name() != null) {
                renames.add(f);
            }
        }
        // what lies inside a new repository is the neutraliser's (its hooks and config are not renamed away)
        renames.removeIf(f -> repositories.stream().anyMatch(r -> f.path().startsWith(r)));
        gitFiles.removeIf(f -> repositories.stream().anyMatch(r -> f.path().startsWith(r)));
        GitNeutraliser git = new GitNeutraliser(plan.workspace, plan.store, lines);
        repositories.forEach(git::repository);
        for (Found f : gitFiles) {
            if (!git.gitFile(f.path())) {
                renames.add(f);
            }
        }
        plan.held.settle(scan.found(), plan.store, lines);
        // deepest first, so a rename never moves another entry still to be renamed
        renames.sort((a, b) -> Integer.compare(b.path().getNameCount(), a.path().getNameCount()));
        renames.forEach(this::quarantine);
        for (Path dir : scan.unlisted()) {
            lines.add(dir + ": could not be checked for protected names and set-id files (it cannot be listed); "
                    + "look inside before opening it with an editor, agent or git");
        }
        opened.entrySet().stream().toList().reversed().forEach(e -> restore(e.getKey(), e.getValue()));
        List<String> out = new ArrayList<>(summary());
        try {
            int items = plan.store.items().size();
            if (items > 0) {
                out.add(items + " change" + (items == 1 ? "" : "s") + " held back from the workspace; review and "
                        + "apply with: sallyport accept --workdir " + plan.workspace);
            }
        } catch (IOException e) {
            out.add("the held store of " + plan.workspace + " cannot be read: " + e.getMessage());
        }
        return List.copyOf(out);
    }

    private void clearSetId(Found f) {
        try {
            // chmod with the nine permission bits only: set-user-ID, set-group-ID and sticky are cleared
            Files.setPosixFilePermissions(f.path(), Files.getPosixFilePermissions(f.path(), LinkOption.NOFOLLOW_LINKS));
            lines.add(f.path() + ": set-user-ID/set-group-ID bit set in the sandbox: removed (mode "
                    + String.format("%04o", f.mode() & 07777) + " is now "
                    + String.format("%04o", f.mode() & 0777) + ")");
        } catch (IOException e) {
            lines.add(f.path() + ": set-user-ID/set-group-ID bit set in the sandbox and NOT removed: " + e.getMessage()
                    + "; remove it (chmod ug-s) before anyone runs that file");
        }
    }

    private void quarantine(Found f) {
        Path parent = f.path().getParent();
        String name = f.path().getFileName().toString();
        boolean reopened = false;
        try {
            for (int n = 1; n <= 100; n++) {
                Path target = parent.resolve(name + QUARANTINE_SUFFIX + (n == 1 ? "" : "-" + n));
                try {
                    Files.move(f.path(), target);
                    lines.add(f.path() + ": protected name created or replaced in the sandbox (" + f.name().why()
                            + "): renamed to " + target.getFileName() + "; review it before renaming it back");
                    return;
                } catch (FileAlreadyExistsException taken) {
                    // try the next name
                } catch (java.nio.file.AccessDeniedException denied) {
                    if (reopened || !open(parent, denied)) {
                        throw denied;
                    }
                    reopened = true;
                    n--;
                }
            }
            throw new IOException("no free quarantine name next to it");
        } catch (IOException e) {
            lines.add(f.path() + ": protected name created or replaced in the sandbox (" + f.name().why()
                    + ") and NOT quarantined: " + e.getMessage() + "; delete it before opening that folder");
        }
    }

    /** Gives the owner full access to {@code dir} for the walk; false when that is not possible. */
    private boolean open(Path dir, IOException cause) {
        try {
            Set<PosixFilePermission> before = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
            Set<PosixFilePermission> after = EnumSet.copyOf(OWNER_ALL);
            after.addAll(before);
            Files.setPosixFilePermissions(dir, after);
            opened.putIfAbsent(dir, before);
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static void restore(Path dir, Set<PosixFilePermission> permissions) {
        try {
            Files.setPosixFilePermissions(dir, permissions);
        } catch (IOException ignored) {
            // renamed into quarantine with its parent, or gone
        }
    }

    private List<String> summary() {
        if (lines.size() <= MAX_LINES) {
            return List.copyOf(lines);
        }
        List<String> out = new ArrayList<>(lines.subList(0, MAX_LINES));
        out.add("... and " + (lines.size() - MAX_LINES) + " more (find the quarantined ones with: find "
                + plan.workspace + " -name '*" + QUARANTINE_SUFFIX + "*')");
        return List.copyOf(out);
    }
}
