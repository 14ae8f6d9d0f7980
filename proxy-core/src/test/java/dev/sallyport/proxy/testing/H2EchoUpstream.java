package dev.sallyport.proxy.testing;

import dev.sallyport.testing.TestPki;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTPS upstream on loopback that speaks only HTTP/2 (ALPN {@code h2}), with a certificate from {@link TestPki}.
 * Routes: {@code /stream} echoes each DATA frame as it arrives and ends with the trailer {@code x-trailer: end}
 * when the request ends; {@code /reset} resets the stream ({@code INTERNAL_ERROR}) before any response;
 * {@code /bytes/N} sends N bytes; {@code /reflect} sends the request's {@code authorization} back in a header, the
 * body and a trailer (what the proxy must scrub); anything else answers once the request ended:
 * {@code METHOD PATH authority=A te=T len=N conn=C}, and the trailer {@code x-trailer: end} when the request
 * sent {@code te: trailers}. Records each request's fields and the connections it accepted.
 */
public final class H2EchoUpstream implements AutoCloseable {

    /** One request as the upstream saw it: its fields (pseudo-headers included) and its connection's number. */
    public record Seen(Map<String, String> fields, int connection) {
        public String path() {
            return fields.get(":path");
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    public final List<Seen> requests = new CopyOnWriteArrayList<>();
    public final AtomicInteger connections = new AtomicInteger();

    private H2EchoUpstream(TestPki.Issued cert, boolean refuseOthers) throws Exception {
        SslContext tls = SslContextBuilder.forServer(cert.key(), cert.chain())
                .sslProvider(refuseOthers ? SslProvider.JDK : SslProvider.OPENSSL)
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        refuseOthers ? ApplicationProtocolConfig.SelectorFailureBehavior.FATAL_ALERT
                                : ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2))
                .build();
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        int number = connections.incrementAndGet();
                        ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        ch.pipeline().addLast(Http2FrameCodecBuilder.forServer()
                                .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(200))
                                .build());
                        ch.pipeline().addLast(new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                            @Override
                            protected void initChannel(Http2StreamChannel stream) {
                                stream.pipeline().addLast(new StreamHandler(number));
                            }
                        }));
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                ctx.close();    // a refused handshake, a client gone: the test asserts on results
                            }
                        });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    public static H2EchoUpstream start(TestPki.Issued cert) throws Exception {
        return new H2EchoUpstream(cert, false);
    }

    /**
     * One that answers a client offering only other protocols in ALPN with the {@code no_application_protocol}
     * alert, as Go's and the JDK's servers configured for {@code h2} alone do.
     */
    public static H2EchoUpstream refusingHttp11(TestPki.Issued cert) throws Exception {
        return new H2EchoUpstream(cert, true);
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The request to {@code path} (without query), or null. */
    public Seen seen(String path) {
        return requests.stream().filter(r -> r.path().split("\\?")[0].equals(path)).findFirst().orElse(null);
    }

    @Override
    public void close() {
        server.close();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    private final class StreamHandler extends ChannelInboundHandlerAdapter {
        private final int connection;
        private Http2Headers head;
        private long length;
        private boolean answered;

        StreamHandler(int connection) {
            this.connection = connection;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2HeadersFrame headers && head == null) {
                    head = headers.headers();
                    Map<String, String> fields = new LinkedHashMap<>();
                    head.forEach(e -> fields.merge(e.getKey().toString(), e.getValue().toString(),
                            (a, b) -> a + "," + b));
                    requests.add(new Seen(fields, connection));
                    String path = String.valueOf(head.path());
                    if (path.equals("/reset")) {
                        ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.INTERNAL_ERROR));
                        return;
                    }
                    if (path.equals("/stream")) {
                        ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")
                                .set("x-upstream", "h2echo")));
                    }
                    if (path.equals("/reflect")) {
                        String auth = String.valueOf(head.get("authorization"));
                        ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")
                                .set("x-echo-auth", auth)));
                        ctx.write(new DefaultHttp2DataFrame(Unpooled.copiedBuffer("body has " + auth + "\n",
                                StandardCharsets.UTF_8), false));
                        ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers()
                                .set("x-trailer-auth", auth), true));
                        answered = true;
                        return;
                    }
                    if (path.startsWith("/bytes/")) {
                        int n = Integer.parseInt(path.substring("/bytes/".length()));
                        ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")
                                .setInt("content-length", n)));
                        ByteBuf body = ctx.alloc().buffer(n);
                        body.writeZero(n);
                        ctx.writeAndFlush(new DefaultHttp2DataFrame(body, true));
                        answered = true;
                        return;
                    }
                    if (headers.isEndStream()) {
                        answer(ctx);
                    }
                } else if (msg instanceof Http2DataFrame data) {
                    length += data.content().readableBytes();
                    if (String.valueOf(head.path()).equals("/stream")) {
                        if (data.content().isReadable()) {
                            ctx.writeAndFlush(new DefaultHttp2DataFrame(data.content().retain(), false));
                        }
                        if (data.isEndStream()) {
                            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers()
                                    .set("x-trailer", "end"), true));
                        }
                    } else if (data.isEndStream()) {
                        answer(ctx);
                    }
                } else if (msg instanceof Http2HeadersFrame trailers && trailers.isEndStream()) {
                    if (String.valueOf(head.path()).equals("/stream")) {
                        ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers()
                                .set("x-trailer", "end"), true));
                    } else {
                        answer(ctx);
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void answer(ChannelHandlerContext ctx) {
            if (answered) {
                return;
            }
            answered = true;
            String te = String.valueOf(head.get("te"));
            byte[] body = (head.method() + " " + head.path() + " authority=" + head.authority() + " te=" + te
                    + " len=" + length + " conn=" + connection + "\n").getBytes(StandardCharsets.UTF_8);
            ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")
                    .set("x-upstream", "h2echo").setInt("content-length", body.length)));
            boolean trailers = "trailers".equals(te);
            ctx.write(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(body), !trailers));
            if (trailers) {
                ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().set("x-trailer", "end"), true));
            }
            ctx.flush();
        }
    }
}
