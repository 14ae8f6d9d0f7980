package dev.sallyport.benchmarks.peers;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.util.ReferenceCountUtil;

/**
 * HTTP/2 load on one connection: {@code --h2-streams} streams in flight, each a GET of the run's path; a stream that
 * ends opens the next while the run hands out requests. The connection closes when the last stream is done.
 */
final class H2Streams {

    private final Slot slot;
    private final Channel connection;
    private final Http2Headers request;
    private int open;

    private H2Streams(Slot slot, Channel connection, Http2Headers request) {
        this.slot = slot;
        this.connection = connection;
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
        ctx.pipeline().addBefore(ctx.name(), "h2", Http2FrameCodecBuilder.forClient().build());
        ctx.pipeline().addBefore(ctx.name(), "h2-mux", new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
        Http2Headers request = new DefaultHttp2Headers().method("GET").scheme("https")
                .authority(host + ":" + run.options().port()).path(run.options().path())
                .add("user-agent", "sallyport-loadgen").add("accept", "*/*");
        H2Streams streams = new H2Streams(slot, ctx.channel(), request);
        for (int i = 0; i < run.options().h2Streams(); i++) {
            streams.next();
        }
    }

    private void next() {
        if (!slot.nextRequest()) {
            if (open == 0) {
                connection.close();
            }
            return;
        }
        open++;
        long started = System.nanoTime();
        new Http2StreamChannelBootstrap(connection).handler(new Stream(started)).open().addListener(f -> {
            if (f.isSuccess()) {
                ((Http2StreamChannel) f.getNow()).writeAndFlush(new DefaultHttp2HeadersFrame(request, true));
            } else {
                done(false, started);
            }
        });
    }

    private void done(boolean ok, long started) {
        open--;
        slot.streamDone(ok, started);
        next();
    }

    private final class Stream extends ChannelInboundHandlerAdapter {
        private final long started;
        private boolean ok;
        private boolean ended;

        Stream(long started) {
            this.started = started;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                boolean end = false;
                if (msg instanceof Http2HeadersFrame headers) {
                    if (headers.headers().status() != null && !ok) {
                        ok = "200".contentEquals(headers.headers().status());
                    }
                    end = headers.isEndStream();
                } else if (msg instanceof Http2DataFrame data) {
                    slot.body(data.content().readableBytes());
                    end = data.isEndStream();
                }
                if (end && !ended) {
                    ended = true;
                    ctx.close();
                    done(ok, started);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!ended) {
                ended = true;
                done(false, started);
            }
        }
    }
}
