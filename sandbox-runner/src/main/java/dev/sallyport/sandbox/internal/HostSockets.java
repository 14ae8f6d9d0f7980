package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Socket files that already exist in the folders the sandbox sees from the host (the workspace and the grants):
 * each is a host service's door (git's fsmonitor daemon in {@code .git}, a development database, an ssh
 * ControlPath) that a read-only mount does not close, since {@code connect(2)} and {@code sendto(2)} need no write
 * access to the mount. {@link BwrapCommand} binds an empty read-only file over each, which nothing can connect
 * to. The workspace's come from the walk {@link ProtectedPaths} makes anyway ({@link WorkspaceScan}; as there,
 * nothing inside {@code node_modules} is mounted); the grants' from {@code find -type s}, which reads the file
 * types from the folder listings without a {@code stat} per file. With a start-up cache folder, what a walk of
 * folder grants found is kept there ({@link GrantsWalkRecord}), and the next run with the same grants checks each
 * folder's change time instead of listing it again.
 */
public final class HostSockets {
    /** More than this is not a project but a mistake (a grant of a whole runtime folder). */
    static final int LIMIT = 1000;
    private static final long TIMEOUT_SECONDS = 120;

    private HostSockets() {
    }

    /**
     * Begins looking for the socket files under {@code grants} on a thread of its own: a walk of tool folders
     * under the home can take a few tenths of a second, which the rest of the sandbox's set-up overlaps.
     */
    public static CompletableFuture<List<Path>> findInBackground(List<Path> grants, Optional<Path> cache) {
        CompletableFuture<List<Path>> found = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("sallyport-host-sockets").start(() -> {
            try {
                found.complete(find(grants, cache, InstantSource.system()));
            } catch (SandboxException | RuntimeException e) {
                found.completeExceptionally(e);
            }
        });
        return found;
    }

    /** Every socket file to cover: the workspace's (from {@code plan}) and those {@link #findInBackground} found. */
    public static List<Path> cover(ProtectedPaths.Plan plan, CompletableFuture<List<Path>> grants)
            throws SandboxException {
        List<Path> sockets = new ArrayList<>(plan.sockets);
        try {
            sockets.addAll(grants.get());
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof SandboxException failed) {
                throw failed;
            }
            throw new SandboxException("grants: looking for socket files failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("grants: interrupted while looking for socket files", e);
        }
        if (sockets.size() > LIMIT) {
            throw new SandboxException("workspace: " + sockets.size() + " socket files in the workspace and the grants "
                    + "(expected: at most " + LIMIT + "; each is a host service the sandbox must not reach)");
        }
        return List.copyOf(sockets);
    }

    /**
     * Every socket file under {@code roots}, without following symbolic links: from the record in {@code cache} when
     * it holds one for these roots and nothing changed, else from a walk that is recorded there for the next run
     * ({@code clock} says when the walk began).
     */
    static List<Path> find(List<Path> roots, Optional<Path> cache, InstantSource clock) throws SandboxException {
        if (roots.isEmpty()) {
            return List.of();
        }
        if (cache.isEmpty() || !roots.stream().allMatch(r -> GrantsWalkRecord.stat(r).isPresent())) {
            return find(roots);   // a file or a link among the grants: walked every time
        }
        Optional<List<Path>> recalled = GrantsWalkRecord.recall(cache.get(), roots);
        if (recalled.isPresent()) {
            return recalled.get();
        }
        long start = clock.millis();
        List<String> printed = run(roots, "(", "-type", "d", "-printf", "d %p\\0", ")", "-o", "(", "-type", "s",
                "-printf", "s %p\\0", ")");
        if (printed.isEmpty()) {
            return find(roots);   // a find without -printf (busybox): the roots are folders, so it printed nothing
        }
        List<GrantsWalkRecord.Folder> folders = new ArrayList<>();
        List<Path> sockets = new ArrayList<>();
        boolean complete = true;
        for (String entry : printed) {
            Path path = Path.of(entry.substring(2));
            if (entry.startsWith("s ")) {
                sockets.add(path);
            } else {
                Optional<GrantsWalkRecord.Stat> stat = GrantsWalkRecord.stat(path);
                stat.ifPresent(st -> folders.add(new GrantsWalkRecord.Folder(path, st)));
                complete &= stat.isPresent();   // gone or replaced since: not recorded
            }
        }
        if (complete) {
            GrantsWalkRecord.remember(cache.get(), roots, start, folders, sockets);
        }
        return sockets;
    }

    /** Every socket file under {@code roots}, without following symbolic links. */
    static List<Path> find(List<Path> roots) throws SandboxException {
        if (roots.isEmpty()) {
            return List.of();
        }
        return run(roots, "-type", "s", "-print0").stream().map(Path::of).toList();
    }

    /** What {@code find -P ROOTS EXPRESSION} prints, split at NULs (each expression prints NUL-ended names). */
    private static List<String> run(List<Path> roots, String... expression) throws SandboxException {
        List<String> argv = new ArrayList<>(List.of("find", "-P"));
        roots.forEach(r -> argv.add(r.toString()));
        argv.addAll(List.of(expression));
        try {
            Process find = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
                try {
                    return find.getInputStream().readAllBytes();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            if (!find.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                find.destroyForcibly();
                throw new SandboxException("grants: looking for socket files in " + roots + " took over "
                        + TIMEOUT_SECONDS + " s (expected: tool folders, not a whole file system)");
            }
            List<String> printed = new ArrayList<>();
            for (String name : new String(out.get(), StandardCharsets.UTF_8).split("\0")) {
                if (!name.isEmpty()) {
                    printed.add(name);
                }
            }
            return printed;
        } catch (IOException | java.util.concurrent.ExecutionException e) {
            throw new SandboxException("grants: cannot look for socket files with find(1): " + e.getMessage()
                    + " (expected: find from GNU findutils or busybox on PATH)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("grants: interrupted while looking for socket files", e);
        }
    }
}
