package dev.sallyport.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.ReferenceCountUtil;

/**
 * The upstream end of one exchange: hands the decoded response to the {@link FrontendHandler} that owns the
 * exchange. Added when the exchange gets its connection, removed when it is returned to the pool.
 */
final class BackendHandler extends ChannelInboundHandlerAdapter {

    static final String NAME = "sallyport-backend";

    private final FrontendHandler frontend;
    private final Exchange exchange;

    BackendHandler(FrontendHandler frontend, Exchange exchange) {
        this.frontend = frontend;
        this.exchange = exchange;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (exchange.finished || exchange.responseDone && !exchange.upgraded) {
            // read ahead after the response (or the exchange) ended: nothing more belongs to it, and a
            // connection that sends more than its response is not reused
            ReferenceCountUtil.release(msg);
            exchange.upstreamReusable = false;
            return;
        }
        if (msg instanceof HttpObject http && http.decoderResult().isFailure()) {
            ReferenceCountUtil.release(msg);
            frontend.upstreamFailed(exchange, 502, "upstream_bad_response", "upstream sent a malformed response: "
                    + http.decoderResult().cause().getMessage());
            return;
        }
        switch (msg) {
            case HttpResponse response -> frontend.responseHead(exchange, response);
            case HttpContent content -> frontend.responseContent(exchange, content);
            case ByteBuf raw -> frontend.upgradedBytes(exchange, raw);
            default -> ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        frontend.responses.readComplete(exchange);
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!exchange.responseDone || exchange.upgraded) {
            frontend.upstreamFailed(exchange, 502, "upstream_closed", "upstream closed the connection");
        }   // else the whole response is written; its write listener ends the exchange
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        frontend.upstreamFailed(exchange, 502, "upstream_failed", "upstream connection failed: " + cause.getMessage());
        ctx.close();
    }
}
