package dev.sallyport.proxy.testing;

import dev.sallyport.testing.TestPki;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback upstream for proxy tests (HTTP, or HTTPS with a certificate from {@link TestPki}). Routes:
 * {@code /bytes/N} streams N bytes; {@code /delay/MS} answers after MS ms; {@code /silent} never answers; {@code /ws} is a WebSocket echo; anything
 * else answers {@code method uri host=... len=N} followed by the request body. Records request heads.
 */
public final class EchoUpstream implements AutoCloseable {

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    public final List<String> requests = new CopyOnWriteArrayList<>();
    public final AtomicInteger connections = new AtomicInteger();
    /** Connections closed (by either side). */
    public final AtomicInteger closed = new AtomicInteger();
    /** Body bytes of {@code /bytes/N} responses written to the socket so far. */
    public final AtomicLong bytesStreamed = new AtomicLong();

    private EchoUpstream(SslContext tls) throws InterruptedException {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        ch.closeFuture().addListener(f -> closed.incrementAndGet());
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024 * 1024),
                                new WebSocketServerProtocolHandler("/ws"), new Routes());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    public static EchoUpstream http() throws InterruptedException {
        return new EchoUpstream(null);
    }

    public static EchoUpstream https(TestPki.Issued cert) throws Exception {
        return new EchoUpstream(SslContextBuilder.forServer(cert.key(), cert.chain()).build());
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Routes extends SimpleChannelInboundHandler<Object> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof TextWebSocketFrame frame) {
                ctx.writeAndFlush(new TextWebSocketFrame("echo:" + frame.text()));
                return;
            }
            if (!(msg instanceof FullHttpRequest request)) {
                return;
            }
            requests.add(request.method() + " " + request.uri() + " " + request.headers().entries());
            String uri = request.uri();
            if (uri.startsWith("/silent")) {
                return;
            }
            if (uri.startsWith("/delay/")) {
                FullHttpRequest copy = request.copy();   // unpooled heap copy: nothing to leak if never sent
                byte[] bytes = io.netty.buffer.ByteBufUtil.getBytes(copy.content());
                copy.release();
                FullHttpRequest snapshot = new io.netty.handler.codec.http.DefaultFullHttpRequest(
                        request.protocolVersion(), request.method(), uri, Unpooled.wrappedBuffer(bytes),
                        request.headers().copy(), io.netty.handler.codec.http.EmptyHttpHeaders.INSTANCE);
                ctx.executor().schedule(() -> {
                    answer(ctx, snapshot, uri);
                    snapshot.release();
                },
                        Long.parseLong(uri.substring(7)), java.util.concurrent.TimeUnit.MILLISECONDS);
                return;
            }
            if (uri.startsWith("/bytes/")) {
                stream(ctx, Long.parseLong(uri.substring(7)));
                return;
            }
            answer(ctx, request, uri);
        }

        private void answer(ChannelHandlerContext ctx, FullHttpRequest request, String uri) {
            String head = request.method() + " " + uri + " host=" + request.headers().get(HttpHeaderNames.HOST)
                    + " len=" + request.content().readableBytes() + "\n";
            ByteBuf body = Unpooled.wrappedBuffer(Unpooled.copiedBuffer(head, StandardCharsets.UTF_8),
                    request.content().retain());
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            response.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            response.headers().set("X-Upstream", "echo");
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            var f = ctx.writeAndFlush(response);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private void stream(ChannelHandlerContext ctx, long total) {
            DefaultHttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            HttpUtil.setContentLength(response, total);
            ctx.write(response);
            writeChunk(ctx, total);
        }

        private void writeChunk(ChannelHandlerContext ctx, long left) {
            if (left == 0) {
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                return;
            }
            int n = (int) Math.min(left, 64 * 1024);
            ByteBuf chunk = ctx.alloc().buffer(n).writeZero(n);
            ctx.writeAndFlush(new DefaultHttpContent(chunk)).addListener(f -> {
                if (f.isSuccess()) {
                    bytesStreamed.addAndGet(n);
                    writeChunk(ctx, left - n);
                }
            });
        }
    }
}
