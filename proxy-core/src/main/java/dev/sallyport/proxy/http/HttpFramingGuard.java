package dev.sallyport.proxy.http;

import dev.sallyport.policy.Limits;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Sits before Netty's lenient HTTP decoder and follows the request framing itself: heads through
 * {@link HeadScanner}, bodies by Content-Length or strict chunk syntax, the body cap, and a deadline for each
 * head (slowloris). Bytes pass through unchanged; at the first fault the rest is dropped and a
 * {@link Violation} follows the bytes that came before it.
 */
public final class HttpFramingGuard extends ChannelInboundHandlerAdapter {

    private enum Phase { HEAD, FIXED_BODY, CHUNK_SIZE, CHUNK_DATA, CHUNK_DATA_CR, CHUNK_DATA_LF, TRAILER, FAILED }

    private static final int MAX_CHUNK_LINE = 4096;

    private final Limits limits;
    private final Duration headDeadline;
    private Phase phase = Phase.HEAD;
    private HeadScanner head;
    private long remaining;
    private long bodyBytes;
    private long chunkSize;
    private long messagesEnded;
    private int chunkLine;
    private ChunkExtensions chunkExt;
    private boolean chunkCr;
    private ScheduledFuture<?> deadline;

    public HttpFramingGuard(Limits limits, Duration headDeadline) {
        this.limits = limits;
        this.headDeadline = headDeadline;
        this.head = newHead(false);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (phase == Phase.FAILED) {
            buf.release();
            return;
        }
        int start = buf.readerIndex();
        int end = buf.writerIndex();
        int i = start;
        Violation fault = null;
        while (i < end && fault == null) {
            switch (phase) {
                case HEAD, TRAILER -> {
                    if (!head.started() && phase == Phase.HEAD) {
                        armDeadline(ctx);
                    }
                    HeadScanner.Step step = head.feed(buf.getByte(i++));
                    if (step == null) {
                        fault = head.violation();
                    } else if (step == HeadScanner.Step.DONE) {
                        fault = phase == Phase.HEAD ? startBody() : endMessage();
                    }
                }
                case FIXED_BODY -> {
                    int n = (int) Math.min(remaining, end - i);
                    i += n;
                    remaining -= n;
                    if (remaining == 0) {
                        fault = endMessage();
                    }
                }
                case CHUNK_SIZE -> fault = chunkSizeByte(buf.getByte(i++));
                case CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, end - i);
                    i += n;
                    remaining -= n;
                    if (remaining == 0) {
                        phase = Phase.CHUNK_DATA_CR;
                    }
                }
                case CHUNK_DATA_CR -> fault = expect(buf.getByte(i++), '\r', Phase.CHUNK_DATA_LF);
                case CHUNK_DATA_LF -> fault = expect(buf.getByte(i++), '\n', Phase.CHUNK_SIZE);
                case FAILED -> i = end;
            }
        }
        if (fault == null) {
            ctx.fireChannelRead(buf);
            return;
        }
        fail(ctx, buf, start, i, fault);
    }

    private void fail(ChannelHandlerContext ctx, ByteBuf buf, int start, int at, Violation fault) {
        phase = Phase.FAILED;
        cancelDeadline();
        int before = Math.max(0, at - 1 - start);
        if (before > 0) {
            ctx.fireChannelRead(buf.retainedSlice(start, before));
        }
        buf.release();
        ctx.fireChannelRead(fault);
    }

    private Violation startBody() {
        cancelDeadline();
        if (head.chunked()) {
            phase = Phase.CHUNK_SIZE;
            bodyBytes = 0;
            resetChunkLine();
            return null;
        }
        long length = Math.max(0, head.contentLength());
        if (limits.maxBodyBytes() > 0 && length > limits.maxBodyBytes()) {
            return new Violation(413, "body_too_large");
        }
        if (length == 0) {
            return endMessage();
        }
        phase = Phase.FIXED_BODY;
        remaining = length;
        return null;
    }

    private Violation chunkSizeByte(byte b) {
        if (++chunkLine > MAX_CHUNK_LINE) {
            return new Violation(400, "bad_chunk_size");
        }
        if (chunkCr) {
            if (b != '\n' || chunkLine == 2 || (chunkExt != null && !chunkExt.complete())) {
                return new Violation(400, "bad_chunk_size");
            }
            return chunkSizeDone();
        }
        if (b == '\r') {
            chunkCr = true;
        } else if (chunkExt != null) {
            if (!chunkExt.accept(b)) {
                return new Violation(400, "bad_chunk_size");
            }
        } else if (b == ';' && chunkLine > 1) {
            chunkExt = new ChunkExtensions();
        } else {
            int digit = Character.digit(b, 16);
            if (digit < 0 || chunkSize > (Long.MAX_VALUE >> 5)) {
                return new Violation(400, "bad_chunk_size");
            }
            chunkSize = chunkSize * 16 + digit;
        }
        return null;
    }

    private Violation chunkSizeDone() {
        long size = chunkSize;
        resetChunkLine();
        if (size == 0) {
            phase = Phase.TRAILER;
            head = newHead(true);
            return null;
        }
        bodyBytes += size;
        if (limits.maxBodyBytes() > 0 && bodyBytes > limits.maxBodyBytes()) {
            return new Violation(413, "body_too_large");
        }
        phase = Phase.CHUNK_DATA;
        remaining = size;
        return null;
    }

    private void resetChunkLine() {
        chunkSize = 0;
        chunkLine = 0;
        chunkExt = null;
        chunkCr = false;
    }

    private Violation expect(byte b, char wanted, Phase next) {
        if (b != wanted) {
            return new Violation(400, "bad_chunk_framing");
        }
        phase = next;
        return null;
    }

    private Violation endMessage() {
        messagesEnded++;
        phase = Phase.HEAD;
        head = newHead(false);
        return null;
    }

    private HeadScanner newHead(boolean trailer) {
        return new HeadScanner(limits.maxInitialLineBytes(), limits.maxHeaderBytes(), trailer);
    }

    /** How many messages (head, body, trailers) have passed whole: the fuzz target compares it with the decoder's count. */
    long messagesEnded() {
        return messagesEnded;
    }

    /** A request head has begun and its deadline is armed: the 408 for a stalled head comes from here. */
    public boolean headInProgress() {
        return phase == Phase.HEAD && head.started() && deadline != null;
    }

    private void armDeadline(ChannelHandlerContext ctx) {
        cancelDeadline();
        deadline = ctx.executor().schedule(() -> {
            if (phase == Phase.HEAD && head.started()) {
                phase = Phase.FAILED;
                ctx.fireChannelRead(new Violation(408, "header_timeout"));
            }
        }, headDeadline.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelDeadline();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelDeadline();
        ctx.fireChannelInactive();
    }
}
