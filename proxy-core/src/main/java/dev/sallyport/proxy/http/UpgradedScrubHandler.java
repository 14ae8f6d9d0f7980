package dev.sallyport.proxy.http;

import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.ResponseScrubber;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.EmptyHttpHeaders;

/**
 * On the upstream side of an upgraded (WebSocket) connection, before the byte relay: passes on the bytes with
 * every real value replaced. Bytes held back because they might start a value are released at the next chunk
 * or when the upstream closes; when a chunk produced nothing, it asks for the next read itself (the relay only
 * reads after a write).
 */
final class UpgradedScrubHandler extends ChannelInboundHandlerAdapter {

    private final ResponseScrubber scrubber;

    UpgradedScrubHandler(ResponseScrubber scrubber) {
        this.scrubber = scrubber;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf raw)) {
            ctx.fireChannelRead(msg);
            return;
        }
        boolean[] emitted = {false};
        try {
            scrubber.onContent(raw, b -> {
                emitted[0] = true;
                ctx.fireChannelRead(b);
            });
        } catch (ResponseDecodeException e) {
            ctx.close();
            return;
        }
        if (!emitted[0]) {
            ctx.read();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        try {
            scrubber.onLast(EmptyHttpHeaders.INSTANCE, ctx::fireChannelRead);
        } catch (ResponseDecodeException e) {
            // nothing held back can be decoded here: an upgraded connection is never decoded
        } finally {
            scrubber.close();
        }
        ctx.fireChannelInactive();
    }
}
