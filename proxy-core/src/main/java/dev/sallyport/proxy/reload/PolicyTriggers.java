package dev.sallyport.proxy.reload;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What makes a {@link PolicyHolder} reload by itself: a watch on the policy file's folder (and on its real
 * folder when the file is a symlink), and SIGHUP. Events are let settle for a moment (editors truncate, then
 * write; some write a temp file, then rename), the content must then read the same twice a moment apart, and the
 * holder reloads only when the content really changed.
 */
final class PolicyTriggers implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PolicyTriggers.class);
    static final long SETTLE_MILLIS = 150;
    /** How many settle periods the file's content may keep changing before this round gives up. */
    static final int STABLE_ROUNDS = 20;

    private final PolicyHolder holder;
    private final WatchService watch;
    private final Set<Path> names = new LinkedHashSet<>();
    private final Thread thread;
    private final Sighup sighup;

    private PolicyTriggers(PolicyHolder holder, WatchService watch) {
        this.holder = holder;
        this.watch = watch;
        this.thread = watch == null ? null
                : Thread.ofPlatform().name("sallyport-policy-watch").daemon().unstarted(this::run);
        this.sighup = Sighup.install(holder::reload);
    }

    static PolicyTriggers start(PolicyHolder holder) throws IOException {
        Path source = holder.source();
        if (source == null) {
            return new PolicyTriggers(holder, null);
        }
        WatchService watch = source.getFileSystem().newWatchService();
        try {
            Set<Path> dirs = new LinkedHashSet<>();
            dirs.add(source.getParent());
            PolicyTriggers t = new PolicyTriggers(holder, watch);
            t.names.add(source.getFileName());
            if (Files.isSymbolicLink(source)) {
                Path real = source.toRealPath();
                dirs.add(real.getParent());
                t.names.add(real.getFileName());
            }
            for (Path dir : dirs) {
                dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                        StandardWatchEventKinds.ENTRY_DELETE);
            }
            t.thread.start();
            LOGGER.info("watching policy file: source={} sighup={}", source, t.sighupInstalled());
            return t;
        } catch (IOException | RuntimeException e) {
            watch.close();
            throw new IOException("policy watch: cannot watch the folder of " + source + ": " + e.getMessage()
                    + " (expected: a readable folder; reload with SIGHUP or POST /reload instead)", e);
        }
    }

    boolean sighupInstalled() {
        return sighup.installed();
    }

    private void run() {
        try {
            while (true) {
                WatchKey key = watch.take();
                boolean relevant = relevant(key);
                if (!key.reset()) {
                    LOGGER.warn("policy watch: folder {} is gone; file changes are no longer seen", key.watchable());
                }
                if (!relevant) {
                    continue;
                }
                settle();
                if (!stable()) {
                    LOGGER.warn("policy watch: {} kept changing for {} ms; not reloaded until it stops (or SIGHUP)",
                            holder.source(), SETTLE_MILLIS * STABLE_ROUNDS);
                    continue;
                }
                try {
                    holder.reloadIfChanged();
                } catch (RuntimeException e) {
                    LOGGER.warn("policy watch: reload failed unexpectedly: {}", e.toString());
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed
        }
    }

    /**
     * Waits until no event about the policy file has come for {@link #SETTLE_MILLIS}. Other files' events (an audit
     * log beside it writes all the time) do not extend the wait: under load they came faster than the settle
     * period, and the change waited until the load stopped.
     */
    private void settle() throws InterruptedException {
        long quietUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
        for (long left; (left = quietUntil - System.nanoTime()) > 0; ) {
            WatchKey more = watch.poll(left, TimeUnit.NANOSECONDS);
            if (more == null) {
                return;
            }
            if (relevant(more)) {
                quietUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
            }
            more.reset();
        }
    }

    /**
     * True once two reads of the file a settle period apart hold the same content. Quiet events alone do not
     * show that a writer is done: the audit log beside the file wakes the watch too, and a writer rewriting the
     * file in place (truncate, then write) can pause between the two, which read as an empty or a shorter policy
     * (SnapshotReloadTest and SecretsReloadTest saw policies with fewer rules). A change after this is a new
     * change: its own events bring another round.
     */
    private boolean stable() throws InterruptedException {
        byte[] before = ContentHash.of(holder.source());
        for (int round = 0; round < STABLE_ROUNDS; round++) {
            TimeUnit.MILLISECONDS.sleep(SETTLE_MILLIS);
            byte[] now = ContentHash.of(holder.source());
            if (Arrays.equals(before, now)) {
                return true;
            }
            before = now;
        }
        return false;
    }

    private boolean relevant(WatchKey key) {
        boolean relevant = false;
        for (WatchEvent<?> event : key.pollEvents()) {
            if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                relevant = true;
            } else if (event.context() instanceof Path name) {
                // the file itself, or a Kubernetes-style "..data" symlink swap
                relevant |= names.contains(name) || name.toString().startsWith("..");
            }
        }
        return relevant;
    }

    @Override
    public void close() {
        sighup.close();
        if (watch != null) {
            try {
                watch.close();
            } catch (IOException e) {
                LOGGER.debug("policy watch: close failed", e);
            }
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
