package dev.sallyport.sandbox;

import dev.sallyport.sandbox.internal.AfterRunCheck;
import dev.sallyport.sandbox.internal.HostLink;
import dev.sallyport.sandbox.internal.LimitEnforcement;
import dev.sallyport.sandbox.internal.ProtectedPaths;
import dev.sallyport.sandbox.internal.RootDrop;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A started sandbox: the bwrap process, its host end (relay to the proxy, connect supervisor) and the runtime
 * folder. {@link #close()} asks the command to stop (SIGTERM to every process inside but bwrap's init), kills
 * what is left after a grace period, removes the runtime folder and the masks of protected paths, and checks the workspace for what
 * the command left for the host to obey ({@link #notices()}).
 */
public final class RunningSandbox implements AutoCloseable {
    static final Duration GRACE = Duration.ofSeconds(5);

    private final Process process;
    private final HostLink link;
    private final Path runtime;
    private final ProtectedPaths.Plan plan;
    private final LimitEnforcement limits;
    private final RootDrop drop;
    private final List<String> notices = new ArrayList<>();
    private boolean closed;

    RunningSandbox(Process process, HostLink link, Path runtime, ProtectedPaths.Plan plan, LimitEnforcement limits,
                   RootDrop drop, List<String> warnings) {
        this.process = process;
        this.link = link;
        this.runtime = runtime;
        this.plan = plan;
        this.limits = limits;
        this.drop = drop;
        notices.addAll(warnings);
    }

    /** The bwrap process; its streams are the command's when started with {@link Stdio#pipes()}. */
    public Process process() {
        return process;
    }

    /** Tells the command that the terminal's window changed size (SIGWINCH to its process group). */
    void windowChanged() {
        link.windowChanged();
    }

    /** Waits for the command and returns its exit status (128 + signal when a signal ended it). */
    public int waitFor() throws InterruptedException {
        int status = process.waitFor();
        close();
        return status;
    }

    /** Waits up to {@code timeout}; empty when the command is still running. */
    public Optional<Integer> waitFor(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return Optional.empty();
        }
        close();
        return Optional.of(process.exitValue());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (process.isAlive()) {
            // TERM to everything inside but bwrap itself (the outer bwrap would die of it and take the command's
            // status with it; bwrap's init ignores it anyway): the command and its children.
            process.descendants().filter(p -> !p.info().command().map(c -> c.endsWith("/bwrap")).orElse(false))
                    .forEach(ProcessHandle::destroy);
            try {
                if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        link.close();
        drop.close();
        notices.addAll(limits.report());
        limits.remove();
        notices.addAll(AfterRunCheck.run(plan));
        deleteTree(runtime);
    }

    /**
     * Lines for the user, one each: what this host could not limit (at the start), then after the run the limits
     * that were hit (memory, tasks), the quarantined protected names and the removed set-id bits; empty when there
     * is nothing to say.
     */
    public synchronized List<String> notices() {
        return List.copyOf(notices);
    }

    /** What enforces the memory and task limits on this host ({@code cgroup v2 /sys/fs/cgroup/...}, rlimits). */
    public String limitEnforcement() {
        return limits.describe();
    }

    /** {@link #notices()}, each returned once. */
    synchronized List<String> takeNotices() {
        List<String> taken = List.copyOf(notices);
        notices.clear();
        return taken;
    }

    static void deleteTree(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    // A mount still attached here (an idmapped workspace) is the user's: never delete into it.
                    return !dir.equals(root) && RootDrop.isMountRoot(dir) ? FileVisitResult.SKIP_SUBTREE
                            : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    if (!dir.equals(root) && RootDrop.isMountRoot(dir)) {
                        return FileVisitResult.CONTINUE;
                    }
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort: the folder lives under the temp dir with mode 0700
        }
    }
}
