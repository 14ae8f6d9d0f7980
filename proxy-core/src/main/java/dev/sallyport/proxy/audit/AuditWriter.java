package dev.sallyport.proxy.audit;

import dev.sallyport.policy.AuditSettings;
import dev.sallyport.proxy.events.ProxyEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The audit log's writer thread: takes up to 1,024 items at a time, encodes them into a batch of at most 64 KiB,
 * writes when the batch is full or the queue drained, then lingers 2 ms so that the next records gather. A batch
 * the sink refuses is held (from the byte where the sink stopped) and retried with a back-off of 50 ms doubling to
 * a second; nothing new is taken meanwhile, so what waits stays in the bounded queue.
 *
 * <p>Each line is linked into the {@link AuditChain}; a signed checkpoint follows the records of a batch once a
 * second has passed since the last one, the last records before the writer goes idle (within the probe interval,
 * a second) and, at close, everything this writer wrote. A file due for rotation ends with a {@code rotate}
 * checkpoint and the chain goes on in the next.
 */
final class AuditWriter implements Runnable {

    /** What the queue carries: a record, a flush marker, the close marker. */
    sealed interface Item {
        record Event(ProxyEvent event) implements Item {}

        record Flush(CountDownLatch done) implements Item {}

        record Close() implements Item {}
    }

    private static final int MAX_BATCH_BYTES = 64 * 1024;
    private static final int MAX_TAKE = 1024;
    private static final long PROBE_MILLIS = 1000;
    /** How long the writer waits after a write before taking what queued meanwhile: the most a record waits. */
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long RETRY_FIRST_MILLIS = 50;
    private static final long RETRY_MAX_MILLIS = 1000;
    /** How long a closing log retries a failing sink before it counts what it still holds as lost. */
    private static final long CLOSE_RETRY_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** The most time between checkpoints while records are being written. */
    private static final long CHECKPOINT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final BlockingQueue<Item> queue;
    private final AuditSink sink;
    private final InstantSource clock;
    private final AuditHealth health;
    private final int recoverBelow;
    private final AuditChain chain;
    private final AuditKey key;
    private final AuditSettings rotation;
    private long checkpointedAt = System.nanoTime();
    private boolean sealed;
    private boolean rotating;
    private boolean rotationFailed;
    private volatile long closeDeadline;   // 0 until close
    private volatile long written;

    private final Batch batch = new Batch(MAX_BATCH_BYTES + 4096);
    private final ArrayDeque<Item> taken = new ArrayDeque<>(MAX_TAKE);
    /** The batch the sink refused, from where it stopped; null when nothing is held. */
    private ByteBuffer unwritten;
    private long retryMillis = RETRY_FIRST_MILLIS;
    private boolean closing;

    AuditWriter(BlockingQueue<Item> queue, AuditSink sink, InstantSource clock, AuditHealth health, int recoverBelow,
                AuditChain chain, AuditKey key, AuditSettings rotation) {
        this.queue = queue;
        this.sink = sink;
        this.clock = clock;
        this.health = health;
        this.recoverBelow = recoverBelow;
        this.chain = chain;
        this.key = key;
        this.rotation = rotation;
    }

    /** Records written so far. */
    long written() {
        return written;
    }

    /** From now the writer retries a failing sink for at most two seconds more (it still takes the close marker). */
    void closing() {
        closeDeadline = System.nanoTime() + CLOSE_RETRY_NANOS;
    }

    @Override
    public void run() {
        try {
            while (true) {
                if (unwritten != null && !retry()) {
                    if (closeDeadline != 0 && System.nanoTime() > closeDeadline) {
                        abandon();
                        return;
                    }
                    continue;
                }
                if (taken.isEmpty() && !closing && !take()) {
                    continue;
                }
                process();
                if (closing && taken.isEmpty() && unwritten == null && seal() && writeOut()) {
                    return;
                }
                if (!closing && unwritten == null && taken.isEmpty() && queue.isEmpty()) {
                    // Let the next records gather before taking them: a writer that waits on an empty queue is
                    // woken by every record (a futex wake on the event loop and a context switch each, 10% of
                    // the proxy's CPU under keep-alive load in a perf profile); one that lingers is not.
                    LockSupport.parkNanos(LINGER_NANOS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            for (Item item : taken) {
                if (item instanceof Item.Flush f) {
                    f.done().countDown();
                }
            }
            try {
                sink.close();
            } catch (IOException e) {
                health.say("closing failed (" + AuditLog.describe(e) + ")");
            }
        }
    }

    /** Waits for what queues within the probe interval; false (after the idle work) when nothing did. */
    private boolean take() throws InterruptedException {
        Item first = queue.poll(PROBE_MILLIS, TimeUnit.MILLISECONDS);
        if (first == null) {
            if (chain.unsigned() > 0 && unwritten == null) {
                checkpoint("interval");    // going idle: sign what was written
                writeOut();
            }
            if (!health.healthy() && caughtUp()) {
                health.recover();   // a queue-full episode ends once the writer has caught up
            }
            return false;
        }
        taken.add(first);
        queue.drainTo(taken, MAX_TAKE - 1);
        return true;
    }

    /** Appends what was taken, writing as batches fill, until all is appended or a write fails (the rest waits). */
    private void process() {
        while (!taken.isEmpty()) {
            switch (taken.peek()) {
                case Item.Event e -> {
                    taken.poll();
                    append(e.event());
                    if (batch.size() >= MAX_BATCH_BYTES && !writeOut()) {
                        return;
                    }
                }
                case Item.Flush f -> {
                    if (!writeOut()) {
                        return;
                    }
                    taken.poll();
                    f.done().countDown();
                }
                case Item.Close c -> {
                    taken.poll();
                    closing = true;
                    queue.drainTo(taken);
                }
            }
        }
        if (!closing && queue.isEmpty()) {
            writeOut();
        }
    }

    private void append(ProxyEvent event) {
        int start = batch.size();
        try {
            Optional<JsonLine> line = AuditRecords.write(event, event.ts() == null ? clock.instant() : event.ts(), batch);
            line.ifPresent(l -> chain.link(l, batch));
        } catch (RuntimeException e) {
            batch.position(start);   // nothing of the record stays
            health.lose(1, "a record could not be encoded (" + AuditLog.describe(e) + ")");
        }
        if (System.nanoTime() - checkpointedAt >= CHECKPOINT_NANOS && chain.unsigned() > 0) {
            checkpoint("interval");
        }
    }

    private void checkpoint(String at) {
        chain.checkpoint(clock.instant(), at, key, batch);
        checkpointedAt = System.nanoTime();
    }

    /** The close checkpoint, once, when this writer wrote records; always true (for the caller's condition). */
    private boolean seal() {
        if (!sealed && (chain.unsigned() > 0 || written > 0)) {
            checkpoint("close");
        }
        sealed = true;
        return true;
    }

    /** Writes the batch (or the rest of a held one); false when the sink refused, the batch then held. */
    @SuppressWarnings("NonAtomicVolatileUpdate")   // only the writer thread (run) updates written
    private boolean writeOut() {
        if (unwritten == null) {
            if (batch.isEmpty()) {
                return true;
            }
            unwritten = batch.view();
        }
        try {
            sink.write(unwritten);
        } catch (IOException | RuntimeException e) {
            health.fail("write failed (" + AuditLog.describe(e) + "); the " + batch.records()
                    + " records of the batch are kept and retried");
            return false;
        }
        written += batch.records();
        batch.clear();
        unwritten = null;
        retryMillis = RETRY_FIRST_MILLIS;
        if (rotation.rotates() && !rotating && !rotationFailed && sink instanceof FileSink file
                && file.due(rotation.rotateBytes(), rotation.rotateEvery())) {
            rotate(file);
        }
        if (caughtUp()) {
            health.recover();
        }
        return true;
    }

    /**
     * Ends the file with a {@code rotate} checkpoint and begins the next: the chain goes on in it. A failure keeps
     * writing to the current file (said once per failure; the next write tries again).
     */
    private void rotate(FileSink file) {
        rotating = true;
        checkpoint("rotate");
        boolean out = writeOut();   // when held, it is retried as any batch, and rotation after the next write
        rotating = false;
        if (!out) {
            return;
        }
        try {
            file.rotate(clock.instant());
        } catch (IOException e) {
            rotationFailed = true;
            health.say("rotating failed (" + AuditLog.describe(e) + "); writing on to the same file, not rotating"
                    + " it again until the proxy restarts (expected: a folder this user can rename files in)");
        }
    }

    /** Waits (doubling up to a second; briefly once closing) and writes the held batch again. */
    private boolean retry() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(closeDeadline != 0 ? RETRY_FIRST_MILLIS : retryMillis));
        retryMillis = Math.min(retryMillis * 2, RETRY_MAX_MILLIS);
        return writeOut();
    }

    /** Shutting down while the sink still refuses: what is held and queued is lost, counted and said. */
    private void abandon() {
        long held = batch.records() + events(taken) + events(queue);
        health.lose(held, "the sink still refuses writes at shutdown");
        health.say("the sink still refuses writes at shutdown; " + held + " records are lost (expected: a writable"
                + " audit sink; records lost in total: " + health.lost() + ")");
    }

    private static long events(Collection<Item> items) {
        return items.stream().filter(Item.Event.class::isInstance).count();
    }

    boolean caughtUp() {
        return queue.size() <= recoverBelow;
    }
}
