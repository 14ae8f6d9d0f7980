package dev.sallyport.proxy.audit;

import dev.sallyport.policy.AuditSettings;
import dev.sallyport.policy.Limits;
import dev.sallyport.proxy.audit.AuditWriter.Item;
import dev.sallyport.proxy.events.ProxyEvent;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.InstantSource;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The audit log: one JSON line per decision, exchange, tunnel and reload (docs/REFERENCE.md), written off the event
 * loop by an {@link AuditWriter} thread. {@link #admit} and {@link #on} only enqueue and never block.
 *
 * <p>A record taken into the queue is never dropped. The data path forwards a request or tunnel only once
 * {@link #admit} took its decision record, and nothing is admitted while the sink fails or the queue holds
 * {@code capacity} records; the records that end what was admitted (exchange, tunnel, WebSocket) may use a
 * reserve beyond that of {@value #ENDS_PER_CONNECTION} per allowed client connection. Other records (refusals,
 * reloads) are kept while fewer than {@code capacity} are queued, and while the log fails only while fewer than
 * {@code capacity / 16}: a client sending refused requests cannot fill memory while the disk is full. When a write fails the
 * writer keeps the batch (a file resumes at the byte where the disk stopped it) and retries, taking nothing new,
 * so the queue's bound is what the refusal ({@link #accepting()} false: 503 {@code audit_unavailable}) respects.
 * A failure episode is one line on stderr and the {@link AuditFailureListener} is told; it ends at the next
 * successful write once the queue is at most half full. Records are lost only when a refusal's record finds the
 * queue full, an end record finds the reserve full too, a record arrives after close, or the sink still fails at
 * shutdown: each is counted ({@code sallyport_audit_dropped_total}) and the first of an episode said on stderr.
 */
public final class AuditLog implements AuditGate, AutoCloseable {

    /** Records the queue holds before the log stops admitting new requests. */
    public static final int DEFAULT_CAPACITY = 65_536;
    /** Records an admitted client connection may still owe: the ends of its tunnel, exchange and WebSocket. */
    public static final int ENDS_PER_CONNECTION = 4;

    private static final long CLOSE_WAIT_MILLIS = 30_000;

    private final int capacity;
    private final int reserve;
    /** While failing, refusals' records are kept only up to this many queued records (an attacker sends them). */
    private final int failingBound;
    private final BlockingQueue<Item> queue;
    private final AuditHealth health;
    private final AuditWriter writing;
    private final Thread writer;
    private final AuditKey key;
    private volatile boolean closed;

    @SuppressWarnings("checkstyle:ParameterNumber")
    AuditLog(String target, AuditSink sink, InstantSource clock, AuditFailureListener listener, PrintStream stderr,
             int capacity, int reserve, AuditChain chain, AuditKey key, AuditSettings rotation) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: > 0)");
        }
        if (reserve < 0) {
            throw new IllegalArgumentException("reserve: " + reserve + " (expected: >= 0)");
        }
        this.capacity = capacity;
        this.reserve = reserve;
        this.failingBound = Math.max(1, capacity / 16);
        this.queue = new ArrayBlockingQueue<>(capacity + reserve + 2);   // + a flush and the close marker
        this.health = new AuditHealth(target, listener, stderr);
        this.writing = new AuditWriter(queue, sink, clock, health, capacity / 2, chain, key, rotation);
        this.key = key;
        this.writer = Thread.ofPlatform().name("sallyport-audit-writer").daemon().unstarted(writing);
    }

    /** The reserve for end records when at most maxConnections client connections are open. */
    public static int reserveFor(int maxConnections) {
        return (int) Math.min(Integer.MAX_VALUE / 2, (long) ENDS_PER_CONNECTION * maxConnections);
    }

    /**
     * {@link #open(String, InstantSource, AuditFailureListener, int, AuditKey)} for the default connection limit,
     * signing with a key generated for this log only.
     */
    public static AuditLog open(String path, InstantSource clock, AuditFailureListener onFailure) throws IOException {
        return open(path, clock, onFailure, Limits.DEFAULTS.maxConnections(), AuditKey.generate());
    }

    /**
     * Opens the audit log at path ({@code "-"} = stdout), appending and continuing the hash chain of its last
     * line; a new file is created readable by its owner and group only. maxConnections
     * ({@code proxy.limits.max_connections}) sizes the reserve for end records; key signs the checkpoints.
     */
    public static AuditLog open(String path, InstantSource clock, AuditFailureListener onFailure, int maxConnections,
                                AuditKey key) throws IOException {
        return open(new AuditSettings(path), clock, onFailure, maxConnections, key);
    }

    /** {@link #open(String, InstantSource, AuditFailureListener, int, AuditKey)}, rotating as settings say. */
    public static AuditLog open(AuditSettings settings, InstantSource clock, AuditFailureListener onFailure,
                                int maxConnections, AuditKey key) throws IOException {
        String path = settings.path();
        int reserve = reserveFor(maxConnections);
        if (path.equals("-")) {
            return start(new AuditLog("stdout", new StreamSink(new StdoutSink(System.out), false), clock, onFailure,
                    System.err, DEFAULT_CAPACITY, reserve, AuditChain.fresh(), key, settings));
        }
        Path file = Path.of(path);
        try {
            createPrivately(file);
            return start(new AuditLog(file.toString(), FileSink.open(file), clock, onFailure, System.err,
                    DEFAULT_CAPACITY, reserve, AuditChain.continuing(file), key, settings));
        } catch (IOException e) {
            throw new IOException("audit.path: cannot open '" + file + "' for appending: " + describe(e)
                    + " (expected: a writable file in an existing folder, or \"-\" for stdout)", e);
        }
    }

    /** An audit log writing to out, which the caller owns (it is flushed, never closed). */
    public static AuditLog to(OutputStream out, InstantSource clock, AuditFailureListener onFailure) {
        return start(new AuditLog("stream", new StreamSink(out, false), clock, onFailure, System.err,
                DEFAULT_CAPACITY, reserveFor(Limits.DEFAULTS.maxConnections()), AuditChain.fresh(), AuditKey.generate(),
                AuditSettings.STDOUT));
    }

    static AuditLog start(AuditLog log) {
        log.writer.start();
        return log;
    }

    @Override
    public boolean admit(ProxyEvent decision) {
        if (!accepting()) {
            return false;
        }
        if (queue.size() >= capacity || !queue.offer(new Item.Event(decision))) {
            health.fail(fallingBehind());
            return false;
        }
        return true;
    }

    /**
     * Enqueues the record for this event (gauge-only events are ignored). The end of an exchange, tunnel or
     * WebSocket may use the reserve; other records (refusals, reloads) are lost, and counted, while the queue holds
     * {@code capacity} (while failing, {@code capacity / 16}). Never blocks.
     */
    @Override
    public void on(ProxyEvent event) {
        if (!AuditRecords.isRecord(event)) {
            return;
        }
        if (closed) {
            health.lose(1, "a record arrived after the audit log was closed");
            return;
        }
        boolean end = AuditRecords.endsAdmitted(event);
        if (!end && queue.size() >= (health.healthy() ? capacity : failingBound)) {
            health.lose(1, health.healthy() ? fallingBehind() : "the log is failing and holds at most "
                    + failingBound + " records of refusals meanwhile");
        } else if ((end && queue.size() >= capacity + reserve) || !queue.offer(new Item.Event(event))) {
            health.lose(1, "the queue of " + capacity + " records and its reserve of " + reserve
                    + " for the ends of admitted exchanges are full");
        } else if (end && queue.size() >= capacity) {
            health.fail(fallingBehind());
        }
    }

    /** False while writes fail or the queue is full: the data path then refuses new requests. */
    @Override
    public boolean accepting() {
        return health.healthy() && !closed;
    }

    /** The key that signs the checkpoints. */
    public AuditKey key() {
        return key;
    }

    /** Records written so far. */
    public long recordsWritten() {
        return writing.written();
    }

    /** Records lost so far (also reported to the failure listener). */
    public long recordsLost() {
        return health.lost();
    }

    /**
     * Blocks until everything queued before this call has been written; returns early while the log is failing
     * (what it holds is written once the sink recovers) or once the writer has stopped.
     */
    public void flush() {
        CountDownLatch done = new CountDownLatch(1);
        try {
            while (!queue.offer(new Item.Flush(done), 100, TimeUnit.MILLISECONDS)) {
                if (!writer.isAlive() || !health.healthy()) {
                    return;
                }
            }
            LockSupport.unpark(writer);   // a writer lingering after its last write takes the flush at once
            while (!done.await(100, TimeUnit.MILLISECONDS)) {
                if (!writer.isAlive() || !health.healthy()) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Writes what is queued, stops the writer and closes the file (stdout is only flushed). A sink that still
     * fails is retried for two seconds; what it then holds is counted as lost and said on stderr.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        writing.closing();
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
        if (writer.isAlive()) {
            health.say("writer did not finish within " + CLOSE_WAIT_MILLIS / 1000 + " s at shutdown; "
                    + queue.size() + " queued records are lost (expected: a sink that accepts writes)");
            writer.interrupt();
        }
    }

    private String fallingBehind() {
        return "the writer is behind (queue of " + capacity + " records full)";
    }

    static void createPrivately(Path file) throws IOException {
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

    static String describe(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }
}
