package dev.sallyport.proxy.audit;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The audit log: one JSON line per decision, exchange, tunnel and reload (CONTRACT.md), written off the
 * event loop. {@link #on} only enqueues (never blocks); one writer thread batches lines and flushes when the
 * queue drains, then lets records gather for 2 ms before it takes the next batch (so a record reaches the file
 * at most about 2 ms after its event, and a crash of the whole process loses at most that much more).
 *
 * <p>Nothing is lost silently. When the queue is full, nearly full (the last 1/16 is kept for exchanges
 * already in flight) or a write fails, the log enters a failure episode: one line on stderr, the
 * {@link AuditFailureListener} is told (and counts each lost record), and {@link #accepting()} is false so
 * the data path refuses new requests. The episode ends at the next successful write once the queue is at
 * most half full (hysteresis, so a busy log does not flap); while failing and idle the writer probes once a
 * second. After a failed write the next write
 * starts with a line feed, so a fragment a failing disk may have left never merges with the next record.
 */
public final class AuditLog implements ProxyEventListener, AutoCloseable {

    /** Records the queue holds before the log stops accepting. */
    public static final int DEFAULT_CAPACITY = 65_536;

    private static final int MAX_BATCH_BYTES = 64 * 1024;
    private static final long PROBE_MILLIS = 1000;
    /** How long the writer waits after a write before taking what queued meanwhile: the most a record waits. */
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long CLOSE_WAIT_MILLIS = 30_000;

    private sealed interface Item {
        record Event(ProxyEvent event) implements Item {}

        record Flush(CountDownLatch done) implements Item {}

        record Close() implements Item {}
    }

    /** Whether the log is writing normally or in a failure episode (and why). */
    private sealed interface Health {
        record Healthy() implements Health {}

        record Failing(String cause) implements Health {}
    }

    private static final Health HEALTHY = new Health.Healthy();

    private final String target;
    private final OutputStream out;
    private final boolean closeOut;
    private final InstantSource clock;
    private final AuditFailureListener listener;
    private final PrintStream stderr;
    private final int capacity;
    private final int headroom;
    private final int recoverBelow;
    private final BlockingQueue<Item> queue;
    private final AtomicReference<Health> health = new AtomicReference<>(HEALTHY);
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;

    // Writer-thread state.
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(MAX_BATCH_BYTES + 4096);
    private int pending;
    private boolean lineBreakOwed;

    AuditLog(String target, OutputStream out, boolean closeOut, InstantSource clock, AuditFailureListener listener,
             PrintStream stderr, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: > 0)");
        }
        this.target = target;
        this.out = out;
        this.closeOut = closeOut;
        this.clock = clock;
        this.listener = listener;
        this.stderr = stderr;
        this.capacity = capacity;
        this.headroom = capacity / 16;
        this.recoverBelow = capacity / 2;
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.writer = Thread.ofPlatform().name("sallyport-audit-writer").daemon().unstarted(this::run);
    }

    /**
     * Opens the audit log at path ({@code "-"} = stdout), appending; a new file is created readable by its
     * owner and group only.
     */
    public static AuditLog open(String path, InstantSource clock, AuditFailureListener onFailure) throws IOException {
        if (path.equals("-")) {
            return start(new AuditLog("stdout", new StdoutSink(System.out), false, clock, onFailure, System.err,
                    DEFAULT_CAPACITY));
        }
        Path file = Path.of(path);
        try {
            createPrivately(file);
            OutputStream out = Files.newOutputStream(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            return start(new AuditLog(file.toString(), out, true, clock, onFailure, System.err, DEFAULT_CAPACITY));
        } catch (IOException e) {
            throw new IOException("audit.path: cannot open '" + file + "' for appending: " + describe(e)
                    + " (expected: a writable file in an existing folder, or \"-\" for stdout)", e);
        }
    }

    /** An audit log writing to out, which the caller owns (it is flushed, never closed). */
    public static AuditLog to(OutputStream out, InstantSource clock, AuditFailureListener onFailure) {
        return start(new AuditLog("stream", out, false, clock, onFailure, System.err, DEFAULT_CAPACITY));
    }

    static AuditLog start(AuditLog log) {
        log.writer.start();
        return log;
    }

    /** Enqueues the record for this event (gauge-only events are ignored). Never blocks. */
    @Override
    public void on(ProxyEvent event) {
        if (!AuditRecords.isRecord(event)) {
            return;
        }
        if (closed) {
            lose(1, "a record arrived after the audit log was closed");
            return;
        }
        if (!queue.offer(new Item.Event(event))) {
            lose(1, "the writer cannot keep up (queue of " + capacity + " records is full)");
            return;
        }
        if (headroom > 0 && queue.remainingCapacity() <= headroom) {
            startEpisode("the writer is falling behind (queue of " + capacity + " records nearly full)");
        }
    }

    /** False while writes fail or the queue is (nearly) full: the data path then refuses new requests. */
    public boolean accepting() {
        return health.get() == HEALTHY && !closed;
    }

    /** Records written so far. */
    public long recordsWritten() {
        return written.get();
    }

    /** Records lost so far (also reported to the failure listener). */
    public long recordsLost() {
        return lost.get();
    }

    /** Blocks until everything queued before this call has been written (or the writer has stopped). */
    public void flush() {
        CountDownLatch done = new CountDownLatch(1);
        try {
            while (!queue.offer(new Item.Flush(done), 100, TimeUnit.MILLISECONDS)) {
                if (!writer.isAlive()) {
                    return;
                }
            }
            LockSupport.unpark(writer);   // a writer lingering after its last write takes the flush at once
            while (!done.await(100, TimeUnit.MILLISECONDS)) {
                if (!writer.isAlive()) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes what is queued, stops the writer and closes the file (stdout is only flushed). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        try {
            while (writer.isAlive() && !queue.offer(new Item.Close(), 100, TimeUnit.MILLISECONDS)) {
                if (System.nanoTime() > deadline) {
                    break;
                }
            }
            LockSupport.unpark(writer);
            writer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long left = queue.stream().filter(Item.Event.class::isInstance).count();
        if (!writer.isAlive() && left > 0) {
            lose(left, "records arrived while the audit log was closing");
        }
        if (writer.isAlive()) {
            stderr.println("sallyport: audit log " + target + ": writer did not finish within "
                    + CLOSE_WAIT_MILLIS / 1000 + " s at shutdown; " + queue.size()
                    + " queued records are lost (expected: a sink that accepts writes)");
            writer.interrupt();
        }
    }

    private void run() {
        List<Item> batch = new ArrayList<>(1024);
        try {
            while (true) {
                Item first = queue.poll(PROBE_MILLIS, TimeUnit.MILLISECONDS);
                if (first == null) {
                    idle();
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, 1023);
                boolean close = false;
                for (Item item : batch) {
                    switch (item) {
                        case Item.Event e -> {
                            append(e.event());
                            if (buffer.size() >= MAX_BATCH_BYTES) {
                                writeOut();
                            }
                        }
                        case Item.Flush f -> {
                            writeOut();
                            f.done().countDown();
                        }
                        case Item.Close c -> close = true;
                    }
                }
                batch.clear();
                if (close) {
                    drainAfterClose(batch);
                    return;
                }
                if (queue.isEmpty()) {
                    writeOut();
                    // Let the next records gather before taking them: a writer that waits on an empty queue is
                    // woken by every record (a futex wake on the event loop and a context switch each, 10% of
                    // the proxy's CPU under keep-alive load in a perf profile); one that lingers is not.
                    LockSupport.parkNanos(LINGER_NANOS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeSink();
        }
    }

    private void drainAfterClose(List<Item> batch) {
        queue.drainTo(batch);
        for (Item item : batch) {
            switch (item) {
                case Item.Event e -> append(e.event());
                case Item.Flush f -> { }
                case Item.Close c -> { }
            }
        }
        writeOut();
        for (Item item : batch) {
            if (item instanceof Item.Flush f) {
                f.done().countDown();
            }
        }
    }

    private void append(ProxyEvent event) {
        try {
            Optional<String> line = AuditRecords.encode(event, clock.instant());
            if (line.isPresent()) {
                buffer.writeBytes(line.get().getBytes(StandardCharsets.US_ASCII));
                pending++;
            }
        } catch (RuntimeException e) {
            lose(1, "a record could not be encoded (" + describe(e) + ")");
        }
    }

    private void writeOut() {
        if (pending == 0 && !lineBreakOwed) {
            return;
        }
        int records = pending;
        try {
            if (lineBreakOwed) {
                out.write('\n');
            }
            buffer.writeTo(out);
            out.flush();
            lineBreakOwed = false;
            written.addAndGet(records);
            if (caughtUp()) {
                recover();
            }
        } catch (IOException | RuntimeException e) {
            lineBreakOwed = true;
            lose(records, "write failed (" + describe(e) + ")");
        } finally {
            buffer.reset();
            pending = 0;
        }
    }

    /** Idle: end a queue-full episode, or probe a failed sink with the owed line feed. */
    private void idle() {
        if (health.get() != HEALTHY) {
            writeOut();
            if (!lineBreakOwed && caughtUp()) {
                recover();
            }
        }
    }

    private boolean caughtUp() {
        return queue.size() <= recoverBelow;
    }

    private void lose(long records, String cause) {
        if (records > 0) {
            lost.addAndGet(records);
            listener.dropped(records);
        }
        startEpisode(cause);
    }

    private void startEpisode(String cause) {
        if (health.compareAndSet(HEALTHY, new Health.Failing(cause))) {
            String message = "sallyport: audit log " + target + ": " + cause
                    + "; refusing new requests until records are written again"
                    + " (expected: a writable audit sink that keeps up; records lost so far: " + lost.get() + ")";
            stderr.println(message);
            listener.failed(message);
        }
    }

    private void recover() {
        Health h = health.get();
        if (h instanceof Health.Failing && health.compareAndSet(h, HEALTHY)) {
            stderr.println("sallyport: audit log " + target + ": writing again; records lost in total: "
                    + lost.get());
            listener.recovered();
        }
    }

    private void closeSink() {
        try {
            if (closeOut) {
                out.close();
            } else {
                out.flush();
            }
        } catch (IOException e) {
            stderr.println("sallyport: audit log " + target + ": closing failed (" + describe(e) + ")");
        }
    }

    private static void createPrivately(Path file) throws IOException {
        if (Files.exists(file)) {
            return;
        }
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r-----")));
        } catch (FileAlreadyExistsException raced) {
            // created meanwhile: append to it
        } catch (UnsupportedOperationException notPosix) {
            Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND).close();
        }
    }

    private static String describe(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }
}
