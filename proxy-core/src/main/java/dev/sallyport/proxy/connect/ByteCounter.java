package dev.sallyport.proxy.connect;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

/** Counts the raw bytes a client connection received and sent, for the tunnel audit record. */
final class ByteCounter extends ChannelDuplexHandler {

    long received;
    long sent;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf) {
            received += buf.readableBytes();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf buf) {
            sent += buf.readableBytes();
        }
        ctx.write(msg, promise);
    }
}
