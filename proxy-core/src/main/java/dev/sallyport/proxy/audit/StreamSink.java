package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * Stdout or a caller's stream. A stream cannot say how much of a failed write it took, so a retry writes the whole
 * batch again after a line feed: a fragment stays a line of its own, and a record may appear twice, never not at all.
 */
final class StreamSink implements AuditSink {

    private final OutputStream out;
    private final boolean owned;
    private boolean lineFeedOwed;

    StreamSink(OutputStream out, boolean owned) {
        this.out = out;
        this.owned = owned;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        try {
            if (lineFeedOwed) {
                out.write('\n');
            }
            out.write(src.array(), src.arrayOffset() + src.position(), src.remaining());
            out.flush();
        } catch (IOException | RuntimeException e) {
            lineFeedOwed = true;
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
        lineFeedOwed = false;
        src.position(src.limit());
    }

    @Override
    public void close() throws IOException {
        if (owned) {
            out.close();
        } else {
            out.flush();
        }
    }
}
