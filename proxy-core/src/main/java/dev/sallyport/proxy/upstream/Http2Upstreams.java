package dev.sallyport.proxy.upstream;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sallyport.policy.IpAddress;
import dev.sallyport.policy.Timeouts;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * HTTP/2 connections to upstreams, each carrying many exchanges as streams: at most {@link #MAX_PER_KEY} per
 * destination and event loop (a stream's channel runs on its connection's loop, which must be the loop of the client
 * it serves), each used up to the streams the server allows at once (and never beyond {@link #MAX_STREAMS}). A
 * connection takes a new stream only while it is open, has received no GOAWAY, and the address it dialed passes the
 * policy in force. Which destinations chose {@code h2} in ALPN is remembered ({@link #MAX_REMEMBERED}, for
 * {@link #REMEMBER}), so that the exchanges of a burst wait for the one connection being dialed instead of each
 * dialing its own; so is which refused {@code http/1.1}, whose HTTP/1.1 clients' exchanges then go as streams.
 *
 * <p>The codec's limits hold against an upstream as against a client: control frames queued, resets and
 * CONTINUATION frames per window, empty DATA frames; no server push; the response header list bounded like an
 * HTTP/1.1 head. Header fields that hold a real secret value (and {@code authorization}, {@code cookie}) are never
 * put in the HPACK table: a later request on the connection would otherwise carry the value as an index.
 */
final class Http2Upstreams {

    /** HTTP/2 connections kept per destination and loop. */
    static final int MAX_PER_KEY = 4;
    /** Streams at once on one upstream connection, whatever the server allows. */
    static final int MAX_STREAMS = 100;
    static final int MAX_REMEMBERED = 4_096;
    static final Duration REMEMBER = Duration.ofMinutes(10);
    /** A stream's receive window; the connection's is {@link #MAX_STREAMS} of them, so one stalled stream stalls none. */
    static final int STREAM_WINDOW = 256 * 1024;
    static final int MAX_HEADER_LIST = 64 * 1024;
    private static final int MAX_RESETS = 200;
    private static final int RESET_WINDOW_SECONDS = 30;
    private static final Set<String> ALWAYS_SENSITIVE = Set.of("authorization",
            "proxy-authorization", "cookie");

    record Key(EventLoop loop, String host, int port) {}

    /**
     * An HTTP/2 connection, its codec and the address it dialed; {@code pooled}: other exchanges may use it (false
     * for one dialed while the destination's pool was full, which closes once its last stream ended).
     */
    record Parent(Channel channel, Http2FrameCodec codec, IpAddress address, boolean pooled) {
        boolean open() {
            return channel.isActive() && !codec.connection().goAwayReceived() && !codec.connection().goAwaySent();
        }

        boolean hasRoom() {
            return codec.connection().local().canOpenStream()
                    && codec.connection().numActiveStreams() < MAX_STREAMS;
        }
    }

    private final Map<Key, List<Parent>> parents = new ConcurrentHashMap<>();
    private final Map<Key, Future<Parent>> dialing = new ConcurrentHashMap<>();
    private final Cache<String, Boolean> speaksH2 = Caffeine.newBuilder().maximumSize(MAX_REMEMBERED)
            .expireAfterWrite(REMEMBER).build();
    private final Cache<String, Boolean> onlyH2 = Caffeine.newBuilder().maximumSize(MAX_REMEMBERED)
            .expireAfterWrite(REMEMBER).build();
    private final Predicate<CharSequence> holdsSecret;

    /** @param holdsSecret true for a header value that holds a real secret value (never HPACK-indexed) */
    Http2Upstreams(Predicate<CharSequence> holdsSecret) {
        this.holdsSecret = holdsSecret;
    }

    static Key key(EventLoop loop, Destination dest) {
        return new Key(loop, dest.host(), dest.port());
    }

    /** Whether {@code dest} chose {@code h2} last time; null when not known (or forgotten). */
    Boolean remembered(Destination dest) {
        return speaksH2.getIfPresent(dest.text());
    }

    void remember(Destination dest, boolean h2) {
        speaksH2.put(dest.text(), h2);
    }

    /** True when {@code dest} refused {@code http/1.1} in ALPN lately: it speaks HTTP/2 alone. */
    boolean onlyH2(Destination dest) {
        return onlyH2.getIfPresent(dest.text()) != null;
    }

    void rememberOnlyH2(Destination dest) {
        onlyH2.put(dest.text(), Boolean.TRUE);
    }

    /**
     * A pooled connection for {@code key} with room for a stream whose address {@code allowed} still accepts, or null.
     * A connection whose address the policy no longer allows leaves the pool (its streams finish; it closes).
     * Call on {@code key.loop()}.
     */
    Parent pooled(Key key, Predicate<IpAddress> allowed) {
        List<Parent> list = parents.get(key);
        if (list == null) {
            return null;
        }
        for (Iterator<Parent> it = list.iterator(); it.hasNext(); ) {     // on the key's loop: no copy needed
            Parent p = it.next();
            if (!p.open()) {
                it.remove();
                continue;
            }
            if (!allowed.test(p.address())) {
                it.remove();
                p.channel().close();
                continue;
            }
            if (p.hasRoom()) {
                return p;
            }
        }
        return null;
    }

    /** The dial in progress for {@code key} that will become a pooled connection, or null. */
    Future<Parent> dialing(Key key) {
        return dialing.get(key);
    }

    /** Registers {@code promise} as the dial in progress for {@code key} (removed once it completes). */
    void dialStarted(Key key, Promise<Parent> promise) {
        dialing.put(key, promise);
        promise.addListener(f -> dialing.remove(key, promise));
    }

    /**
     * Turns {@code ch}, whose TLS handshake chose {@code h2}, into an HTTP/2 connection and pools it when there is
     * room. Call on its loop.
     */
    Parent becomeHttp2(Key key, Channel ch, IpAddress address, Timeouts timeouts) {
        Http2FrameCodec codec = Http2FrameCodecBuilder.forClient()
                .initialSettings(Http2Settings.defaultSettings()
                        .pushEnabled(false)
                        .maxConcurrentStreams(0)
                        .initialWindowSize(STREAM_WINDOW)
                        .maxHeaderListSize(MAX_HEADER_LIST))
                .validateHeaders(true)
                .headerSensitivityDetector((name, value) -> ALWAYS_SENSITIVE.contains(name.toString())
                        || holdsSecret.test(value))
                .decoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS)
                .encoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS)
                .decoderEnforceMaxSmallContinuationFrames(16)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(2)
                .encoderEnforceMaxQueuedControlFrames(1_000)
                .gracefulShutdownTimeoutMillis(timeouts.idle().toMillis())
                .build();
        ch.pipeline().replace(UpstreamInitializer.CODEC, UpstreamInitializer.CODEC, codec);
        // many streams flush at once: one TLS record and one write for the frames of a loop turn
        ch.pipeline().addBefore(UpstreamInitializer.CODEC, null, new FlushConsolidationHandler(
                FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
        ch.pipeline().addAfter(UpstreamInitializer.CODEC, null, new Http2MultiplexHandler(new NoPush()));
        // the connection's window: room for every stream's, so a stream whose client stopped reading holds back
        // only its own
        try {
            codec.connection().local().flowController().incrementWindowSize(codec.connection().connectionStream(),
                    STREAM_WINDOW * MAX_STREAMS - Http2CodecUtil.DEFAULT_WINDOW_SIZE);
        } catch (Http2Exception e) {
            throw new IllegalStateException("the connection window of a new HTTP/2 connection", e);
        }
        ch.config().setAutoRead(true);
        List<Parent> list = parents.computeIfAbsent(key, k -> new ArrayList<>());
        Parent parent = new Parent(ch, codec, address, list.size() < MAX_PER_KEY);
        if (parent.pooled()) {
            list.add(parent);
            ch.closeFuture().addListener(f -> key.loop().execute(() -> {
                list.remove(parent);
                if (list.isEmpty()) {
                    parents.remove(key, list);  // no key stays behind for a destination no longer used
                }
            }));
        } else if (list.isEmpty()) {
            parents.remove(key, list);
        }
        return parent;
    }

    /**
     * Opens a stream on {@code parent} whose pipeline reads and writes HTTP objects, reading only when asked; its
     * idle timeout is the exchange's, as on an HTTP/1.1 connection.
     */
    static Future<Http2StreamChannel> openStream(Parent parent, Timeouts timeouts) {
        Future<Http2StreamChannel> opened = new Http2StreamChannelBootstrap(parent.channel())
                .option(ChannelOption.AUTO_READ, false)
                .handler(new ChannelInitializer<Http2StreamChannel>() {
                    @Override
                    protected void initChannel(Http2StreamChannel ch) {
                        ch.pipeline().addLast(new IdleStateHandler(0, 0, timeouts.idle().toMillis(),
                                TimeUnit.MILLISECONDS));
                        ch.pipeline().addLast(new UpstreamInitializer.IdleCloser());
                        ch.pipeline().addLast(UpstreamInitializer.CODEC, new Http2StreamCodec());
                        ch.pipeline().addLast(new UpstreamInitializer.ExceptionSink());
                    }
                })
                .open();
        if (!parent.pooled()) {
            opened.addListener(f -> {
                if (f.isSuccess()) {
                    ((Channel) f.getNow()).closeFuture().addListener(c -> {
                        if (parent.codec().connection().numActiveStreams() == 0) {
                            parent.channel().close();
                        }
                    });
                }
            });
        }
        return opened;
    }

    /** True while {@code ch} is an HTTP/2 connection with a stream open: its idle timeout waits for the streams'. */
    static boolean busy(Channel ch) {
        Http2FrameCodec codec = ch.pipeline().get(Http2FrameCodec.class);
        return codec != null && codec.connection().numActiveStreams() > 0;
    }

    /** Closes the pooled connections. */
    void closeAll() {
        parents.values().forEach(list -> List.copyOf(list).forEach(p -> p.channel().close()));
    }

    /** Server push is off in our SETTINGS; a pushed stream that comes anyway is refused by closing it. */
    private static final class NoPush extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.close();
        }
    }

}
