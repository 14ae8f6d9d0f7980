package dev.sallyport.benchmarks.peers;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;

/** Starts the first request when TLS is up, counts body bytes, reports each complete response to its slot. */
final class ResponseHandler extends ChannelInboundHandlerAdapter {

    private final Slot slot;
    private boolean ok;

    ResponseHandler(Slot slot) {
        this.slot = slot;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                slot.ready(ctx);
            } else {
                if (slot.errors == 0) {
                    System.err.println("loadgen: TLS handshake failed: " + done.cause());
                }
                slot.failed();
                ctx.close();
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpResponse response) {
                ok = response.status().code() == 200 && response.decoderResult().isSuccess();
                if (!ok && slot.errors == 0) {
                    System.err.println("loadgen: unexpected response: " + response.status());
                }
            }
            if (msg instanceof HttpContent content) {
                slot.body(content.content().readableBytes());
                if (msg instanceof LastHttpContent) {
                    slot.completed(ctx, ok);
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (slot.errors == 0) {
            System.err.println("loadgen: " + cause);
        }
        ctx.close();
    }
}
