package dev.sallyport.proxy.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.function.LongConsumer;

/**
 * Relays raw bytes to a peer channel with back-pressure: the next read is requested only after the previous
 * write succeeded. Closing either side closes the other (after flushing). Used for passthrough tunnels and
 * upgraded (WebSocket) connections. {@code counter} receives the bytes relayed from this side.
 */
public final class RelayHandler extends ChannelInboundHandlerAdapter {

    private final Channel peer;
    private final LongConsumer counter;

    public RelayHandler(Channel peer, LongConsumer counter) {
        this.peer = peer;
        this.counter = counter;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            ctx.read();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf buf)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (!peer.isActive()) {
            buf.release();
            ctx.close();
            return;
        }
        counter.accept(buf.readableBytes());
        peer.writeAndFlush(buf).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                ctx.read();
            } else {
                ctx.close();
                f.channel().close();
            }
        });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closeOnFlush(peer);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    public static void closeOnFlush(Channel ch) {
        if (ch.isActive()) {
            ch.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
