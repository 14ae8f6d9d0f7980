package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Files inside the workspace that run later on the host (git hooks and config, editor tasks, direnv, shell rc
 * files): bound read-only over the writable workspace. Each is its own mount point, so it can be neither
 * written, removed nor renamed away ({@code EBUSY}); one that does not exist yet is masked by an empty
 * read-only folder so it cannot be created, and that folder is removed again after the run.
 */
public final class ProtectedPaths {
    /** Protected in every workspace. */
    static final List<String> ALWAYS = List.of(".gitmodules", ".vscode", ".idea", ".envrc", ".bashrc",
            ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".gitconfig",
            ".mcp.json");
    /** Protected inside {@code .git} when the command may write {@code .git}. */
    static final List<String> IN_GIT = List.of("hooks", "config", "info");

    /** One protected path: {@code existed} false means a mask this run creates on the host and removes after. */
    public record Entry(Path path, boolean existed) {}

    /** The plan: {@code gitBind} is {@code .git} re-bound writable onto itself (gitWritable), null otherwise. */
    public record Plan(Path gitBind, List<Entry> readOnly) {}

    private ProtectedPaths() {
    }

    public static Plan plan(Path workspace, boolean gitWritable) throws SandboxException {
        List<Entry> readOnly = new ArrayList<>();
        Path git = workspace.resolve(".git");
        Path gitBind = null;
        if (gitWritable && Files.isDirectory(git, LinkOption.NOFOLLOW_LINKS)) {
            gitBind = git;
            for (String name : IN_GIT) {
                readOnly.add(entry(git.resolve(name)));
            }
        } else {
            readOnly.add(entry(git));
        }
        for (String name : ALWAYS) {
            readOnly.add(entry(workspace.resolve(name)));
        }
        return new Plan(gitBind, List.copyOf(readOnly));
    }

    private static Entry entry(Path path) throws SandboxException {
        if (Files.isSymbolicLink(path)) {
            throw new SandboxException("workspace: " + path + " is a symbolic link (expected: a regular file or "
                    + "folder; protected paths are mounted read-only and a link would point the mount elsewhere)");
        }
        return new Entry(path, Files.exists(path, LinkOption.NOFOLLOW_LINKS));
    }

    /** Removes the empty masks this run created; leaves anything that is not an empty folder alone. */
    public static void removeMasks(Plan plan) {
        for (Entry e : plan.readOnly()) {
            if (e.existed()) {
                continue;
            }
            try {
                if (Files.isDirectory(e.path(), LinkOption.NOFOLLOW_LINKS)) {
                    try (var children = Files.list(e.path())) {
                        if (children.findAny().isEmpty()) {
                            Files.delete(e.path());
                        }
                    }
                }
            } catch (java.io.IOException ignored) {
                // still mounted or changed by someone else: leave it
            }
        }
    }
}
