package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * An audit file, appended to through a {@link FileChannel}: a write the disk cut short (full, quota) is resumed
 * exactly where it stopped. A file that does not end in a line feed (a record cut short when a process died) gets
 * one before the first new record, so the fragment never merges with it. {@link #rotate} renames the file with the
 * time appended ({@code audit.jsonl.2026-12-01T172005.123Z}: names sort as the files were written) and begins a new
 * one under the same name.
 */
final class FileSink implements AuditSink {

    private static final byte[] LINE_FEED = {'\n'};

    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final Path file;
    private FileChannel channel;
    private ByteBuffer owed;
    private long size;
    private long openedNanos = System.nanoTime();

    private FileSink(Path file, FileChannel channel, boolean endsMidLine) throws IOException {
        this.file = file;
        this.channel = channel;
        this.owed = endsMidLine ? ByteBuffer.wrap(LINE_FEED) : null;
        this.size = channel.size();
    }

    /** Whether the file holds maxBytes (0: no limit) or was opened at least every ago (zero: no limit). */
    boolean due(long maxBytes, Duration every) {
        return (maxBytes > 0 && size >= maxBytes)
                || (!every.isZero() && System.nanoTime() - openedNanos >= every.toNanos());
    }

    /** Closes the file, renames it with now appended, and opens a new one (owner and group only) in its place. */
    void rotate(Instant now) throws IOException {
        Path target = file.resolveSibling(file.getFileName() + "." + STAMP.format(now));
        for (int i = 1; Files.exists(target); i++) {
            target = file.resolveSibling(file.getFileName() + "." + STAMP.format(now) + "-" + i);
        }
        channel.close();
        try {
            Files.move(file, target);
        } finally {
            AuditLog.createPrivately(file);     // after a failed move: the same file again
            channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            size = channel.size();
            openedNanos = System.nanoTime();
        }
    }

    static FileSink open(Path file) throws IOException {
        boolean endsMidLine = false;
        try (FileChannel read = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = read.size();
            if (size > 0) {
                ByteBuffer last = ByteBuffer.allocate(1);
                read.read(last, size - 1);
                endsMidLine = last.get(0) != '\n';
            }
        }
        return new FileSink(file, FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
                endsMidLine);
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        while (owed != null && owed.hasRemaining()) {
            size += channel.write(owed);
        }
        owed = null;
        while (src.hasRemaining()) {
            size += channel.write(src);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
