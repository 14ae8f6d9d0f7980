package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A step of a sandbox's set-up that runs beside the others on a thread of its own (a probe that starts a process,
 * a file that takes a while to build), joined where its result is first needed. Its own thread rather than the
 * common pool, which on a two-core host runs one task at a time.
 */
public final class Background {

    /** What a step does: may fail as the set-up's own steps do. */
    @FunctionalInterface
    public interface Step<T> {
        T run() throws IOException, SandboxException;
    }

    private Background() {
    }

    /** Starts {@code step} on a daemon thread named {@code name}. */
    public static <T> CompletableFuture<T> start(String name, Step<T> step) {
        CompletableFuture<T> done = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name(name).start(() -> {
            try {
                T result = step.run();
                dev.sallyport.sandbox.StartTrace.mark(name + " done");
                done.complete(result);
            } catch (IOException | SandboxException | RuntimeException | Error e) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    /** The result of {@code step}, waiting for it; its failure thrown as it was thrown there. */
    public static <T> T join(CompletableFuture<T> step) throws IOException, SandboxException {
        try {
            return step.get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case SandboxException sandbox -> throw sandbox;
                case RuntimeException runtime -> throw runtime;
                case Error error -> throw error;
                default -> throw new IllegalStateException(e.getCause());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("sandbox: interrupted while setting up", e);
        }
    }

    /** Waits for {@code step} to end, its result or failure ignored (a set-up that failed elsewhere cleans up). */
    public static void settle(/* @Nullable */ CompletableFuture<?> step) {
        if (step == null) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                step.get();
                break;
            } catch (ExecutionException e) {
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
