package dev.sallyport.proxy.http2;

import dev.sallyport.policy.Limits;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;

/**
 * The handlers of an HTTP/2 client connection and the limits that hold against HTTP/2's own attacks: streams at once,
 * the header list's size (HPACK bombs and CONTINUATION floods end at it), resets per window (rapid reset, and the
 * resets the proxy is made to send), small CONTINUATION frames and empty DATA frames in a row, and queued control
 * frames (a client that sends SETTINGS or PING without reading the acknowledgements). Netty's codec enforces them;
 * this class chooses them.
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

    /** A connection's codec and its streams' front ends, which share what the codec refused by itself. */
    public record Handlers(Http2FrameCodec codec, ChannelHandler streams) {}

    /**
     * The codec, with the limits above and the header list bounded by the policy's {@code max_header_bytes}, and one
     * {@link Http2StreamFrontend} per stream, reading only when the exchange asks.
     */
    public static Handlers handlers(Limits limits, ExchangeCore core, TunnelTarget tunnel) {
        Http2Refusals refusals = new Http2Refusals(core, tunnel);
        return new Handlers(codec(limits, refusals), streams(core, tunnel, refusals, limits.maxBodyBytes()));
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
                ch.config().setAutoRead(false);
                ch.pipeline().addLast(new Http2StreamFrontend(core, tunnel, refusals, maxBodyBytes));
            }
        });
    }

    /** True while {@code codec}'s connection has a stream open: its exchanges' timeouts apply, not client idle. */
    public static boolean busy(Http2FrameCodec codec) {
        return codec.connection().numActiveStreams() > 0;
    }
}
