package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An audit file, appended to through a {@link FileChannel}: a write the disk cut short (full, quota) is resumed
 * exactly where it stopped. A file that does not end in a line feed (a record cut short when a process died) gets
 * one before the first new record, so the fragment never merges with it.
 */
final class FileSink implements AuditSink {

    private static final byte[] LINE_FEED = {'\n'};

    private final FileChannel channel;
    private ByteBuffer owed;

    private FileSink(FileChannel channel, boolean endsMidLine) {
        this.channel = channel;
        this.owed = endsMidLine ? ByteBuffer.wrap(LINE_FEED) : null;
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
        return new FileSink(FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND), endsMidLine);
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        while (owed != null && owed.hasRemaining()) {
            channel.write(owed);
        }
        owed = null;
        while (src.hasRemaining()) {
            channel.write(src);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
