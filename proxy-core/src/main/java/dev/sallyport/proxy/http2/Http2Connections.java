package dev.sallyport.proxy.http2;

import dev.sallyport.policy.Limits;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import java.time.Duration;

/**
 * The handlers of an HTTP/2 client connection and the limits that hold against HTTP/2's own attacks: streams at once,
 * the header list's size (HPACK bombs and CONTINUATION floods end at it), resets per window (rapid reset, and the
 * resets the proxy is made to send), small CONTINUATION frames and empty DATA frames in a row, and queued control
 * frames (a client that sends SETTINGS or PING without reading the acknowledgements). Netty's codec enforces them;
 * this class chooses them. {@link Http2FrameGuard} adds what the codec lacks (WINDOW_UPDATE floods, a header block
 * never finished).
 */
public final class Http2Connections {

    /** Streams a client may have open at once on one connection. */
    public static final int MAX_CONCURRENT_STREAMS = 100;
    /** Resets (either way) a connection may see per {@link #RESET_WINDOW_SECONDS} before it is closed. */
    static final int MAX_RESETS = 200;
    static final int RESET_WINDOW_SECONDS = 30;
    /** CONTINUATION frames smaller than useful in a row before the connection is closed. */
    static final int MAX_SMALL_CONTINUATIONS = 16;
    /** Empty DATA frames without END_STREAM in a row before the connection is closed. */
    static final int MAX_EMPTY_DATA = 2;
    /** Control frames (SETTINGS and PING acknowledgements, resets) queued for a client that does not read. */
    static final int MAX_QUEUED_CONTROL_FRAMES = 1_000;
    /** A stream's receive window: what a client may send ahead of the upstream taking it. */
    static final int STREAM_WINDOW = 256 * 1024;

    static final org.slf4j.Logger LOGGER = org.slf4j.LoggerFactory.getLogger(Http2Connections.class);

    private Http2Connections() {}

    /**
     * A connection's frame guard (in front of the codec), its codec, its streams' front ends, which share what the
     * codec refused by itself, and the end of its pipeline ({@link ConnectionErrors}).
     */
    public record Handlers(ChannelHandler guard, Http2FrameCodec codec, ChannelHandler streams,
                           ChannelHandler errors) {}

    /**
     * The {@link Http2FrameGuard} (WINDOW_UPDATE floods, header blocks not finished within {@code headDeadline}), the
     * codec, with the limits above and the header list bounded by the policy's {@code max_header_bytes}, and one
     * {@link Http2StreamFrontend} per stream, reading only when the exchange asks.
     */
    public static Handlers handlers(Limits limits, ExchangeCore core, TunnelTarget tunnel, Duration headDeadline) {
        Http2FrameGuard guard = new Http2FrameGuard(headDeadline);
        Http2Refusals refusals = new Http2Refusals(core, tunnel, guard);
        return new Handlers(guard, codec(limits, refusals), streams(core, tunnel, refusals, limits.maxBodyBytes()),
                CONNECTION_ERRORS);
    }

    static Http2FrameCodec codec(Limits limits, Http2Refusals refusals) {
        Http2Settings settings = Http2Settings.defaultSettings()
                .maxConcurrentStreams(MAX_CONCURRENT_STREAMS)
                .maxHeaderListSize(limits.maxHeaderBytes())
                .initialWindowSize(STREAM_WINDOW);
        return Http2FrameCodecBuilder.forServer()
                .initialSettings(settings)
                .validateHeaders(true)
                .decoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS)
                .encoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS)
                .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATIONS)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(MAX_EMPTY_DATA)
                .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
                .frameLogger(refusals)
                .build();
    }

    static ChannelHandler streams(ExchangeCore core, TunnelTarget tunnel, Http2Refusals refusals, long maxBodyBytes) {
        return new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel ch) {
                core.context().emit(new ProxyEvent.StreamOpened(core.context().clock().instant()));
                ch.closeFuture().addListener(f -> core.context().emit(new ProxyEvent.StreamClosed(
                        core.context().clock().instant())));
                ch.config().setAutoRead(false);
                ch.pipeline().addLast(new Http2StreamFrontend(core, tunnel, refusals, maxBodyBytes));
            }
        });
    }

    /**
     * The last handler of an HTTP/2 connection: a connection error the codec answered (GOAWAY, then close) also goes
     * down the pipeline, and would reach its end as a WARN with a stack trace per attacking connection. It stops here;
     * {@link Http2Refusals} already logged the GOAWAY's reason in one line.
     */
    @ChannelHandler.Sharable
    static final class ConnectionErrors extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) != null) {
                LOGGER.debug("HTTP/2 connection error from {}", ctx.channel().remoteAddress(), cause);
            } else {
                ctx.fireExceptionCaught(cause);
            }
        }
    }

    static final ChannelHandler CONNECTION_ERRORS = new ConnectionErrors();

    /** True while {@code codec}'s connection has a stream open: its exchanges' timeouts apply, not client idle. */
    public static boolean busy(Http2FrameCodec codec) {
        return codec.connection().numActiveStreams() > 0;
    }
}
