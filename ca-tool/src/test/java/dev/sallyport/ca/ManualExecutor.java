package dev.sallyport.ca;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;

/** Holds tasks until the test runs them: proves a caller never waits for signing. */
final class ManualExecutor implements Executor {
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
    }

    int pending() {
        return tasks.size();
    }

    void runAll() {
        for (Runnable r = tasks.poll(); r != null; r = tasks.poll()) {
            r.run();
        }
    }
}
