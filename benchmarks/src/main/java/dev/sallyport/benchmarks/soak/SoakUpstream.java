package dev.sallyport.benchmarks.soak;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak's HTTPS upstream on 127.0.0.1 (HTTP/1.1; the proxy's upstream leg is HTTP/1.1 here): {@code GET /small}
 * (two bytes), {@code GET /large} (1 MiB), {@code POST /upload} (answers the length it read), {@code GET /echo-auth}
 * (answers the {@code Authorization} it received: the proxy must scrub the real value it injected), {@code /ws}
 * (WebSocket, text messages echoed). Anything under {@code /private/} counts as a breach: the policy denies it.
 */
final class SoakUpstream implements AutoCloseable {

    static final byte[] LARGE = new byte[1 << 20];

    static {
        Arrays.fill(LARGE, (byte) 'x');
    }

    final AtomicLong secretsSeen = new AtomicLong();
    final AtomicLong breaches = new AtomicLong();
    private final String secret;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final Channel server;

    SoakUpstream(PrivateKey key, X509Certificate[] chain, String secret) throws Exception {
        this.secret = secret;
        SslContext tls = SslContextBuilder.forServer(key, chain)
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(tls.newHandler(ch.alloc()), new HttpServerCodec(),
                                new HttpObjectAggregator(4 << 20), new WebSocketServerProtocolHandler("/ws"),
                                new Requests(), new Echo());
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Requests extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String path = request.uri();
            byte[] body;
            if (path.startsWith("/private/")) {
                breaches.incrementAndGet();
                body = "breach".getBytes(StandardCharsets.US_ASCII);
            } else if (path.equals("/large")) {
                body = LARGE;
            } else if (path.equals("/upload")) {
                body = String.valueOf(request.content().readableBytes()).getBytes(StandardCharsets.US_ASCII);
            } else if (path.equals("/echo-auth")) {
                String auth = String.valueOf(request.headers().get(HttpHeaderNames.AUTHORIZATION));
                if (auth.contains(secret)) {
                    secretsSeen.incrementAndGet();
                }
                body = ("auth=" + auth).getBytes(StandardCharsets.US_ASCII);
            } else {
                body = "ok".getBytes(StandardCharsets.US_ASCII);
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(body));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            HttpUtil.setContentLength(response, body.length);
            HttpUtil.setKeepAlive(response, HttpUtil.isKeepAlive(request));
            var written = ctx.writeAndFlush(response);
            if (!HttpUtil.isKeepAlive(request)) {
                written.addListener(io.netty.channel.ChannelFutureListener.CLOSE);
            }
        }
    }

    private static final class Echo extends SimpleChannelInboundHandler<TextWebSocketFrame> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, TextWebSocketFrame frame) {
            ctx.writeAndFlush(new TextWebSocketFrame(frame.text()));
        }
    }
}
