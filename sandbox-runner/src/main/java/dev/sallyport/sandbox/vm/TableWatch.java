package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.NftRuleset;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks, once per interval while a sandbox runs, that its nftables table is still loaded. A reload of
 * {@code nftables.service} (or anyone's {@code nft flush ruleset}) removes every table, ours included, and would
 * leave the sandbox unconfined. When the table is gone the watch loads it again at once, then stops the sandbox's
 * containers ({@code nerdctl rm -f}); the run then fails with a line that says why ({@link #tripped()}).
 *
 * <p>The same listing shows the sources the table dropped as spoofed (its set {@value NftRuleset#SPOOFED}): each new
 * one is a warning line and goes to {@code spoofed} (once per source), also on the last look when the watch closes.
 */
final class TableWatch implements AutoCloseable {

    private static final Pattern SPOOFED_SET = Pattern.compile("set " + NftRuleset.SPOOFED
            + " \\{[^}]*?elements = \\{([^}]*)}", Pattern.DOTALL);
    private static final Pattern IPV4 = Pattern.compile("\\b\\d{1,3}(?:\\.\\d{1,3}){3}\\b");

    private final NerdctlSpec spec;
    private final CommandRunner runner;
    private final PrintStream out;
    private final Duration interval;
    private final Consumer<String> spoofed;
    private final AtomicBoolean lastLook = new AtomicBoolean();
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean tripped;

    private TableWatch(NerdctlSpec spec, CommandRunner runner, PrintStream out, Duration interval,
                       Consumer<String> spoofed) {
        this.spec = spec;
        this.runner = runner;
        this.out = out;
        this.interval = interval;
        this.spoofed = spoofed;
        this.thread = Thread.ofVirtual().name("sallyport-table-watch-" + spec.network().id()).unstarted(this::watch);
    }

    /** Starts watching {@code spec}'s table; each spoofed source it shows goes to {@code spoofed}, once. */
    static TableWatch start(NerdctlSpec spec, CommandRunner runner, PrintStream out, Duration interval,
                            Consumer<String> spoofed) {
        TableWatch watch = new TableWatch(spec, runner, out, interval, spoofed);
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
                report(result.stdout());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reports the spoofed sources in a listing of the table that were not reported yet. */
    private void report(String listing) {
        for (String source : spoofedSources(listing)) {
            if (seen.add(source)) {
                out.println("warning: sandbox " + spec.network().networkName() + " sent packets from " + source
                        + " on its bridge " + spec.network().bridgeName() + " (its address is "
                        + spec.network().guest() + "): dropped");
                out.flush();
                spoofed.accept(source);
            }
        }
    }

    /** The addresses in the spoofed-source set of an {@code nft list table} listing (none when it is empty). */
    static List<String> spoofedSources(String listing) {
        List<String> sources = new ArrayList<>();
        Matcher set = SPOOFED_SET.matcher(listing);
        if (set.find()) {
            Matcher address = IPV4.matcher(set.group(1));
            while (address.find()) {
                sources.add(address.group());
            }
        }
        return sources;
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

    /**
     * Stops watching and waits for the check in flight, so nothing reloads the table after this returns; then takes
     * one last look for spoofed sources (the table is still there: the teardown removes it after this).
     */
    @Override
    public void close() {
        closed.countDown();
        if (Thread.currentThread() == thread || !lastLook.compareAndSet(false, true)) {
            return;                         // the watch's own thread, or closed already: the last look is taken once
        }
        try {
            thread.join(Duration.ofMinutes(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (!tripped) {
            try {
                CommandResult last = runner.capture(spec.network().tableCheckCommand());
                if (last.exit() == 0) {
                    report(last.stdout());
                }
            } catch (IOException e) {
                // nft did not answer: what it would have shown was dropped all the same
            }
        }
    }
}
