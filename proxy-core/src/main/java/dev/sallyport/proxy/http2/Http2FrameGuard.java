package dev.sallyport.proxy.http2;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Two limits Netty's HTTP/2 codec does not have, read from the frame headers of a client connection on their way to
 * the codec (after TLS; payloads are not looked at, nothing is changed):
 * <ul>
 *   <li>WINDOW_UPDATE frames must be earned: a client gets {@value #WINDOW_UPDATE_ALLOWANCE}, two per HEADERS frame it
 *       sent and ten per DATA frame the proxy sent. A flood of them (each one cheap to send, none answered, so no
 *       queue fills) ends the connection: tunnel reason {@value #WINDOW_UPDATE_FLOOD}.</li>
 *   <li>A header block (HEADERS without END_HEADERS, then CONTINUATION frames) must end within the head deadline
 *       of HTTP/1.1 ({@code timeouts.idle}, at most 30 s). Netty allows 16 small CONTINUATION frames, so a client
 *       sending one just before each idle timeout held its connection sixteen idle timeouts long: tunnel reason
 *       {@value #HEADERS_TIMEOUT}.</li>
 * </ul>
 * Either way the codec answers GOAWAY {@code ENHANCE_YOUR_CALM} and closes the connection; {@link Http2Refusals}
 * gives the tunnel this guard's reason. One per connection, on its event loop.
 */
final class Http2FrameGuard extends ChannelInboundHandlerAdapter {

    static final int WINDOW_UPDATE_ALLOWANCE = 100;
    static final String WINDOW_UPDATE_FLOOD = "h2_window_update_flood";
    static final String HEADERS_TIMEOUT = "h2_headers_timeout";

    private static final int PREFACE = 24;
    private static final int FRAME_HEADER = 9;
    private static final int HEADERS = 0x1;
    private static final int WINDOW_UPDATE = 0x8;
    private static final int CONTINUATION = 0x9;
    private static final int END_HEADERS = 0x4;

    private final Duration headDeadline;
    private final byte[] header = new byte[FRAME_HEADER];
    private int prefaceLeft = PREFACE;
    private int headerRead;
    private long payloadLeft;
    private long headersFrames;
    private long windowUpdates;
    private long dataFramesSent;
    private ScheduledFuture<?> blockDeadline;
    private String failure;

    Http2FrameGuard(Duration headDeadline) {
        this.headDeadline = headDeadline;
    }

    /** The proxy wrote a DATA frame to this client (it earns ten WINDOW_UPDATE frames). */
    void dataSent() {
        dataFramesSent++;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (failure != null) {
            ReferenceCountUtil.release(msg);
            return;
        }
        String violation = msg instanceof ByteBuf bytes ? scan(ctx, bytes) : null;
        if (violation == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        ReferenceCountUtil.release(msg);
        fail(ctx, WINDOW_UPDATE_FLOOD, violation);
    }

    /** Walks the frame headers in {@code bytes}; a description of the first limit broken, or null. */
    private String scan(ChannelHandlerContext ctx, ByteBuf bytes) {
        int at = bytes.readerIndex();
        int end = bytes.writerIndex();
        while (at < end) {
            if (prefaceLeft > 0 || payloadLeft > 0) {
                int skip = (int) Math.min(end - at, prefaceLeft > 0 ? prefaceLeft : payloadLeft);
                if (prefaceLeft > 0) {
                    prefaceLeft -= skip;
                } else {
                    payloadLeft -= skip;
                }
                at += skip;
                continue;
            }
            header[headerRead++] = bytes.getByte(at++);
            if (headerRead == FRAME_HEADER) {
                headerRead = 0;
                payloadLeft = ((header[0] & 0xffL) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
                String violation = frame(ctx, header[3] & 0xff, header[4] & 0xff);
                if (violation != null) {
                    return violation;
                }
            }
        }
        return null;
    }

    private String frame(ChannelHandlerContext ctx, int type, int flags) {
        boolean endHeaders = (flags & END_HEADERS) != 0;
        switch (type) {
            case HEADERS -> {
                headersFrames++;
                if (!endHeaders && blockDeadline == null) {
                    blockDeadline = ctx.executor().schedule(() -> fail(ctx, HEADERS_TIMEOUT, "a header block was not"
                            + " finished within " + headDeadline.toMillis() + " ms (expected: CONTINUATION frames up to"
                            + " END_HEADERS without pause)"), headDeadline.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
            case CONTINUATION -> {
                if (endHeaders) {
                    cancelDeadline();
                }
            }
            case WINDOW_UPDATE -> {
                windowUpdates++;
                long allowed = WINDOW_UPDATE_ALLOWANCE + 2 * headersFrames + 10 * dataFramesSent;
                if (windowUpdates > allowed) {
                    return windowUpdates + " WINDOW_UPDATE frames for " + headersFrames + " HEADERS frames received"
                            + " and " + dataFramesSent + " DATA frames sent (expected: at most " + allowed + ")";
                }
            }
            default -> { }
        }
        return null;
    }

    /** The tunnel's reason when this guard ended the connection, else null. */
    String failure() {
        return failure;
    }

    /** The codec (next in the pipeline) sends GOAWAY with ENHANCE_YOUR_CALM, the tunnel records why, it closes. */
    private void fail(ChannelHandlerContext ctx, String reason, String detail) {
        if (failure != null || !ctx.channel().isActive()) {
            return;
        }
        failure = reason;
        cancelDeadline();
        ctx.fireExceptionCaught(Http2Exception.connectionError(Http2Error.ENHANCE_YOUR_CALM, "%s", detail));
    }

    private void cancelDeadline() {
        if (blockDeadline != null) {
            blockDeadline.cancel(false);
            blockDeadline = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelDeadline();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelDeadline();
    }
}
