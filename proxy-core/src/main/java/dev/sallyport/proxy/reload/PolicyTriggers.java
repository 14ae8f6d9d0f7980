package dev.sallyport.proxy.reload;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What makes a {@link PolicyHolder} reload by itself: a watch on the policy file's folder (and on its real
 * folder when the file is a symlink), and SIGHUP. Events are let settle for a moment (editors truncate, then
 * write; some write a temp file, then rename) and the holder reloads only when the content really changed.
 */
final class PolicyTriggers implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PolicyTriggers.class);
    static final long SETTLE_MILLIS = 150;

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
                for (WatchKey more; (more = watch.poll(SETTLE_MILLIS, TimeUnit.MILLISECONDS)) != null; ) {
                    more.pollEvents();
                    more.reset();
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
