package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Where the writer puts audit lines: a file ({@link FileSink}) or a stream such as stdout ({@link StreamSink}). */
sealed interface AuditSink permits FileSink, StreamSink {

    /**
     * Writes src from its position to its limit. When it throws, src's position is past what the sink took, so
     * writing the rest later neither repeats nor skips a byte (a stream cannot tell: its retry starts over, after
     * a line feed that keeps a fragment it took apart from the record).
     */
    void write(ByteBuffer src) throws IOException;

    /** Closes what the sink owns (a file), or flushes what it does not (stdout, a caller's stream). */
    void close() throws IOException;
}
