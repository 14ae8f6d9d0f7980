package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The entry point bwrap runs inside the sandbox (the first process after bwrap's own init): starts the
 * forwarder to the proxy, confines one fresh platform thread with Landlock, starts the user's command from that
 * thread (the child inherits the thread's Landlock domain; seccomp and no-new-privs came from bwrap), passes
 * stdio through, forwards SIGTERM/SIGINT/SIGHUP as a termination request, and exits with the command's status.
 * Uses JDK classes only: the sandbox mounts just this module's classes.
 */
public final class Inside {
    /** Exit status when the sandbox cannot be set up (like {@code env(1)} and container runtimes). */
    public static final int SETUP_FAILED = 125;
    /** Exit status when the command cannot be started. */
    public static final int NOT_FOUND = 127;

    private Inside() {
    }

    public static void main(String[] args) {
        int status;
        try {
            status = run(Launch.decode(Files.readAllBytes(Path.of(args[0]))));
        } catch (SetupException e) {
            System.err.println("sallyport sandbox: " + e.getMessage());
            status = e.status;
        } catch (IOException | RuntimeException e) {
            System.err.println("sallyport sandbox: setup failed: " + e.getMessage());
            status = SETUP_FAILED;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status);
    }

    private static int run(Launch launch) throws IOException, SetupException {
        Landlock landlock = Landlock.forCurrentArch();
        // Not dumpable: the command (same uid) cannot open this JVM's /proc/PID/mem, environ or fds even where
        // Landlock's ptrace restriction is missing. execve resets the flag, so the command itself stays normal.
        landlock.setNotDumpable();
        // Without a cgroup: limits for this process, inherited by the command (set before any command runs).
        ProcessRlimits.apply(launch.rlimitData(), launch.rlimitTasks());
        Forwarder.start(launch.port(), Path.of(launch.socket()));
        int abi = landlock.abi();
        String warning = landlockCheck(abi, launch.requireLandlock());
        if (warning != null) {
            System.err.println("sallyport sandbox: warning: " + warning);
        }
        List<Landlock.PathRule> rules = new ArrayList<>();
        launch.readPaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.READ)));
        launch.writePaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.READ_WRITE)));
        launch.devicePaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.DEVICES)));

        ProcessBuilder builder = new ProcessBuilder(launch.command())
                .directory(Path.of(launch.cwd()).toFile())
                .inheritIO();
        builder.environment().clear();
        builder.environment().putAll(launch.env());

        CompletableFuture<Process> started = new CompletableFuture<>();
        // TERM, INT and HUP are forwarded to the command instead of shutting this JVM down: the JVM's own
        // handler would exit with 143 and race the command's status. Installed before the command starts, so a
        // signal that arrives right after it started still reaches it.
        AtomicReference<Process> running = new AtomicReference<>();
        AtomicBoolean stopRequested = new AtomicBoolean();
        SignalHandler forward = signal -> {
            stopRequested.set(true);
            Process p = running.get();
            if (p != null) {
                Thread.ofVirtual().start(() -> terminate(p));
            }
        };
        for (String name : List.of("TERM", "INT", "HUP")) {
            try {
                Signal.handle(new Signal(name), forward);
            } catch (IllegalArgumentException e) {
                // the signal is reserved here (e.g. HUP ignored under nohup): the command still gets it directly
            }
        }
        Thread confined = Thread.ofPlatform().name("sallyport-confined").unstarted(() -> {
            try {
                if (abi >= 1) {
                    landlock.restrictCurrentThread(rules, launch.port());
                }
                Process p = builder.start();
                running.set(p);
                if (stopRequested.get()) {
                    Thread.ofVirtual().start(() -> terminate(p));
                }
                started.complete(p);
            } catch (Throwable t) {
                started.completeExceptionally(t);
            }
        });
        confined.start();
        Process child;
        try {
            child = started.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw new SetupException(NOT_FOUND, launch.command().getFirst() + ": cannot start inside the sandbox: "
                        + cause.getMessage() + " (expected: a program on the sandbox's PATH or an absolute path)");
            }
            throw new SetupException(SETUP_FAILED, String.valueOf(cause.getMessage()));
        } catch (InterruptedException e) {
            throw new SetupException(SETUP_FAILED, "interrupted while starting the command");
        }
        while (true) {
            try {
                return child.waitFor();
            } catch (InterruptedException e) {
                // keep waiting: a forwarded signal ends the child
            }
        }
    }

    /**
     * Fails closed when Landlock is required and the kernel cannot enforce all rules (file system and TCP need
     * ABI 4); otherwise returns a warning for a degraded kernel, or null.
     */
    static String landlockCheck(int abi, boolean require) throws SetupException {
        if (abi >= 4) {
            return null;
        }
        String what = abi <= 0 ? "landlock: not available in this kernel"
                : "landlock: ABI " + abi + " enforces the file-system rules only, not the TCP rule";
        if (require) {
            throw new SetupException(SETUP_FAILED, what + " (expected: Landlock ABI >= 4, Linux 6.7+, because "
                    + "--require-landlock was given)");
        }
        return what + "; continuing with namespaces and seccomp (expected: ABI >= 4 for every rule)";
    }

    private static void terminate(Process child) {
        if (!child.isAlive()) {
            return;
        }
        child.destroy();
        try {
            if (!child.waitFor(5, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        } catch (InterruptedException e) {
            child.destroyForcibly();
        }
    }

    static final class SetupException extends Exception {
        private final int status;

        int status() {
            return status;
        }

        SetupException(int status, String message) {
            super(message);
            this.status = status;
        }
    }
}
