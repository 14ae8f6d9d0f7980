package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.util.ReferenceCountUtil;

/**
 * The upstream end of one exchange: hands the decoded response to its {@link ResponseFlow}, and the connection's
 * failures to its {@link Exchange}. Added when the exchange gets its connection, removed when the connection goes
 * back to the pool or closes. Whatever the upstream sends after the last part belongs to nobody: released (the
 * codec has taken the connection out of step, so it is not reused).
 */
final class UpstreamHandler extends ChannelInboundHandlerAdapter {

    static final String NAME = "sallyport-upstream-exchange";

    private final Exchange exchange;
    private final ResponseFlow response;

    UpstreamHandler(Exchange exchange, ResponseFlow response) {
        this.exchange = exchange;
        this.response = response;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!exchange.inProgress() || (response.lastSent() && !(msg instanceof ByteBuf))) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpObject http && http.decoderResult().isFailure()) {
            ReferenceCountUtil.release(msg);
            exchange.upstreamFailed(502, "upstream_bad_response", "upstream sent a malformed response: "
                    + http.decoderResult().cause().getMessage());
            return;
        }
        switch (msg) {
            case HttpResponse head -> response.head(head);
            case HttpContent content -> response.content(content);
            case ByteBuf raw -> exchange.upgradedBytes(raw);
            default -> ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        response.readComplete();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (response.upstreamComplete()) {
            ctx.fireChannelInactive();
            return;
        }
        Long reset = ctx.channel().attr(UpstreamInitializer.STREAM_RESET).get();
        if (reset != null) {
            exchange.upstreamFailed(502, "upstream_reset", "upstream reset the HTTP/2 stream ("
                    + Http2Error.valueOf(reset) + ")");
        } else {
            exchange.upstreamFailed(502, "upstream_closed", "upstream closed the connection");
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        exchange.upstreamFailed(502, "upstream_failed", "upstream connection failed: " + cause.getMessage());
        ctx.close();
    }
}
