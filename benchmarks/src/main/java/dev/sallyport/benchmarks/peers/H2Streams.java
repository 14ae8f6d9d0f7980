package dev.sallyport.benchmarks.peers;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2FrameStreamEvent;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.util.ReferenceCountUtil;
import java.util.IdentityHashMap;

/**
 * HTTP/2 load on one connection: {@code --h2-streams} streams in flight, each a GET of the run's path; a stream that
 * ends opens the next while the run hands out requests. The connection closes when the last stream is done.
 *
 * <p>Streams are frames on the connection (Netty's frame API, no channel per stream), and what a read completes
 * goes out in one flush, as an efficient client does (h2load, grpc): the generator's own cost per request stays
 * small, so that on a small machine the proxy, not the generator, is what the rate measures.
 */
final class H2Streams extends Http2ChannelDuplexHandler {

    private final Slot slot;
    private final Http2Headers request;
    private final IdentityHashMap<Http2FrameStream, Stream> open = new IdentityHashMap<>();
    private ChannelHandlerContext ctx;

    /** One stream in flight: when it started and whether its head said 200. */
    private static final class Stream {
        final long started;
        boolean ok;

        Stream(long started) {
            this.started = started;
        }
    }

    private H2Streams(Slot slot, Http2Headers request) {
        this.slot = slot;
        this.request = request;
    }

    static void start(ChannelHandlerContext ctx, Slot slot, Run run, String host) {
        io.netty.handler.ssl.SslHandler tls = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        if (!"h2".equals(tls.applicationProtocol())) {
            if (slot.errors == 0) {
                System.err.println("loadgen: ALPN chose " + tls.applicationProtocol() + ", not h2");
            }
            slot.failed();
            ctx.close();
            return;
        }
        Http2FrameCodec codec = Http2FrameCodecBuilder.forClient().build();
        Http2Headers request = new DefaultHttp2Headers().method("GET").scheme("https")
                .authority(host + ":" + run.options().port()).path(run.options().path())
                .add("user-agent", "sallyport-loadgen").add("accept", "*/*");
        H2Streams streams = new H2Streams(slot, request);
        ctx.pipeline().addBefore(ctx.name(), "h2", codec);
        ctx.pipeline().addBefore(ctx.name(), "h2-load", streams);
        for (int i = 0; i < run.options().h2Streams(); i++) {
            streams.next();
        }
        streams.ctx.flush();
    }

    @Override
    protected void handlerAdded0(ChannelHandlerContext handlerContext) {
        this.ctx = handlerContext;
    }

    /** Writes the next stream's request (flushed at the end of the read, or by {@link #start}). */
    private void next() {
        if (!slot.nextRequest()) {
            if (open.isEmpty()) {
                ctx.close();
            }
            return;
        }
        Http2FrameStream stream = newStream();
        Stream state = new Stream(System.nanoTime());
        open.put(stream, state);
        ctx.write(new DefaultHttp2HeadersFrame(request, true).stream(stream)).addListener(f -> {
            if (!f.isSuccess() && open.remove(stream) != null) {
                done(state, false);
            }
        });
    }

    private void done(Stream state, boolean ok) {
        slot.streamDone(ok, state.started);
        next();
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        try {
            if (!(msg instanceof Http2StreamFrame frame) || frame.stream() == null) {
                return;
            }
            Stream state = open.get(frame.stream());
            if (state == null) {
                return;
            }
            boolean end = false;
            switch (frame) {
                case Http2HeadersFrame headers -> {
                    if (headers.headers().status() != null && !state.ok) {
                        state.ok = "200".contentEquals(headers.headers().status());
                    }
                    end = headers.isEndStream();
                }
                case Http2DataFrame data -> {
                    slot.body(data.content().readableBytes());
                    end = data.isEndStream();
                }
                case Http2ResetFrame reset -> {
                    state.ok = false;
                    end = true;
                }
                default -> { }
            }
            if (end) {
                open.remove(frame.stream());
                done(state, state.ok);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext c) {
        c.flush();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext c, Object evt) {
        if (evt instanceof Http2FrameStreamEvent) {
            return;     // stream state changes: nothing to do
        }
        c.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        for (Stream state : open.values()) {
            slot.streamDone(false, state.started);
        }
        open.clear();
        c.fireChannelInactive();
    }
}
