package dev.sallyport.proxy.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;

/**
 * Sends a final response, then closes without a TCP reset: shut down output, discard whatever the client is
 * still sending for up to a second, then close. A plain close with unread input would reset the connection and
 * the client could lose the response.
 */
public final class LingeringClose extends ChannelInboundHandlerAdapter {

    private static final long LINGER_MILLIS = 1000;

    private LingeringClose() {}

    /** Writes {@code response}, then lingers (the handler named {@code name} first in the pipeline) and closes. */
    public static void respondAndClose(Channel ch, Object response, String name) {
        ch.writeAndFlush(response).addListener((ChannelFutureListener) f -> linger(f, name));
    }

    /** The same, written from {@code ctx}: raw bytes that pass none of the handlers after it (an HTTP codec). */
    public static void respondAndClose(ChannelHandlerContext ctx, Object response, String name) {
        ctx.writeAndFlush(response).addListener((ChannelFutureListener) f -> linger(f, name));
    }

    private static void linger(ChannelFuture written, String name) {
        Channel ch = written.channel();
        if (!written.isSuccess() || !(ch instanceof DuplexChannel duplex)) {
            ch.close();
            return;
        }
        ch.pipeline().addFirst(name, new LingeringClose());
        duplex.shutdownOutput();
        ch.eventLoop().schedule(() -> ch.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ch.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
        ctx.read();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
            ctx.close();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
