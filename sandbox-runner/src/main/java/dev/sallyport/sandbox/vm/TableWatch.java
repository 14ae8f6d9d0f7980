package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.HostCommand;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Checks, once per interval while a sandbox runs, that its nftables table is still loaded. A reload of
 * {@code nftables.service} (or anyone's {@code nft flush ruleset}) removes every table, ours included, and would
 * leave the sandbox unconfined. When the table is gone the watch loads it again at once, then stops the sandbox's
 * containers ({@code nerdctl rm -f}); the run then fails with a line that says why ({@link #tripped()}).
 */
final class TableWatch implements AutoCloseable {

    private final NerdctlSpec spec;
    private final CommandRunner runner;
    private final PrintStream out;
    private final Duration interval;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean tripped;

    private TableWatch(NerdctlSpec spec, CommandRunner runner, PrintStream out, Duration interval) {
        this.spec = spec;
        this.runner = runner;
        this.out = out;
        this.interval = interval;
        this.thread = Thread.ofVirtual().name("sallyport-table-watch-" + spec.network().id()).unstarted(this::watch);
    }

    /** Starts watching {@code spec}'s table. */
    static TableWatch start(NerdctlSpec spec, CommandRunner runner, PrintStream out, Duration interval) {
        TableWatch watch = new TableWatch(spec, runner, out, interval);
        watch.thread.start();
        return watch;
    }

    /** {@code true} once the table was found missing (and the sandbox stopped). */
    boolean tripped() {
        return tripped;
    }

    private void watch() {
        HostCommand check = spec.network().tableCheckCommand();
        try {
            while (!closed.await(interval.toMillis(), TimeUnit.MILLISECONDS)) {
                CommandResult result;
                try {
                    result = runner.capture(check);
                } catch (IOException slow) {
                    continue;    // nft did not answer in time: ask again next round
                }
                if (result.exit() != 0 && closed.getCount() > 0) {
                    restoreAndStop();
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void restoreAndStop() {
        tripped = true;
        String table = "inet " + spec.network().tableName();
        out.println("error: firewall table " + table + " disappeared; loading it again and stopping the sandbox");
        try {
            runner.capture(spec.network().firewallCommand());
        } catch (IOException e) {
            out.println("error: reloading table " + table + " failed: " + e.getMessage());
        }
        try {
            CommandResult stopped = runner.capture(HostCommand.tolerant(
                    NerdctlCommand.forceRemove(spec.nerdctl(), spec.network()).toArray(String[]::new)));
            if (stopped.exit() != 0) {
                out.println("error: stopping the sandbox failed: nerdctl rm -f exited " + stopped.exit() + ": "
                        + stopped.firstErrorLine());
            }
        } catch (IOException e) {
            out.println("error: stopping the sandbox failed: " + e.getMessage());
        }
    }

    /** Stops watching and waits for the check in flight, so nothing reloads the table after this returns. */
    @Override
    public void close() {
        closed.countDown();
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            thread.join(Duration.ofMinutes(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
