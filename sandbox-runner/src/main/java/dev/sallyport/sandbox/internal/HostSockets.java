package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Socket files that already exist in the folders the sandbox sees from the host (the workspace and the grants):
 * each is a host service's door (git's fsmonitor daemon in {@code .git}, a development database, an ssh
 * ControlPath) that a read-only mount does not close, since {@code connect(2)} and {@code sendto(2)} need no write
 * access to the mount. {@link BwrapCommand} binds an empty read-only file over each, which nothing can connect
 * to. The workspace's come from the walk {@link ProtectedPaths} makes anyway ({@link WorkspaceScan}; as there,
 * nothing inside {@code node_modules} is mounted); the grants' from {@code find -type s}, which reads the file
 * types from the folder listings without a {@code stat} per file.
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
    public static CompletableFuture<List<Path>> findInBackground(List<Path> grants) {
        CompletableFuture<List<Path>> found = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("sallyport-host-sockets").start(() -> {
            try {
                found.complete(find(grants));
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

    /** Every socket file under {@code roots}, without following symbolic links. */
    static List<Path> find(List<Path> roots) throws SandboxException {
        if (roots.isEmpty()) {
            return List.of();
        }
        List<String> argv = new ArrayList<>(List.of("find", "-P"));
        roots.forEach(r -> argv.add(r.toString()));
        argv.addAll(List.of("-type", "s", "-print0"));
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
            List<Path> sockets = new ArrayList<>();
            for (String name : new String(out.get(), StandardCharsets.UTF_8).split("\0")) {
                if (!name.isEmpty()) {
                    sockets.add(Path.of(name));
                }
            }
            return sockets;
        } catch (IOException | java.util.concurrent.ExecutionException e) {
            throw new SandboxException("grants: cannot look for socket files with find(1): " + e.getMessage()
                    + " (expected: find from GNU findutils or busybox on PATH)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("grants: interrupted while looking for socket files", e);
        }
    }
}
