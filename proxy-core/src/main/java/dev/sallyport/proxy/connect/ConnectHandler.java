package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.policy.TlsMode;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;

/**
 * Decides a CONNECT on host and port before anything else (no DNS, no upstream contact for a refused one),
 * answers 200, and replaces the HTTP phase with the tunnel phase: TLS check, then SNI check with a minted
 * certificate (intercept) or ClientHello check and raw relay (passthrough). Other messages pass through.
 */
final class ConnectHandler extends ChannelInboundHandlerAdapter {

    private final ProxyContext context;
    private final ClientPipeline pipeline;
    private final TunnelOpener opener;
    private boolean swallowLast;

    ConnectHandler(ProxyContext context, ClientPipeline pipeline, ByteCounter counter) {
        this.context = context;
        this.pipeline = pipeline;
        this.opener = new TunnelOpener(context, counter);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (swallowLast && msg instanceof HttpObject) {
            ReferenceCountUtil.release(msg);   // the CONNECT's empty body, emitted when the codec goes
            return;
        }
        if (msg instanceof HttpRequest request && request.method().equals(HttpMethod.CONNECT)
                && request.decoderResult().isSuccess()) {
            swallowLast = true;
            connect(ctx, request);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    private void connect(ChannelHandlerContext ctx, HttpRequest request) {
        AuditRecord audit = new AuditRecord(context.nextId(), ctx.channel().remoteAddress())
                .identity(ClientIdentity.of(ctx.channel()).name());
        audit.request("CONNECT", null);
        Authority target;
        try {
            target = parseTarget(request.uri());
        } catch (IllegalArgumentException e) {
            refuse(ctx, audit.denied(e.getMessage()), 400, e.getMessage());
            return;
        }
        TunnelTarget tunnel = opener.open(ctx, target.host(), target.port(), TunnelTarget.EXPLICIT, audit,
                (status, reason) -> refuse(ctx, audit, status, reason));
        if (tunnel == null) {
            return;
        }
        boolean passthrough = tunnel.decision().tls() == TlsMode.PASSTHROUGH;
        ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK))
                .addListener((ChannelFutureListener) f -> {
                    if (f.isSuccess()) {
                        // not inside the decoder's call: it may still emit the CONNECT's empty body
                        ctx.executor().execute(() -> becomeTunnel(ctx, tunnel, passthrough));
                    } else {
                        ctx.close();
                    }
                });
    }

    private static Authority parseTarget(String uri) {
        Authority target = Authority.parse(uri, -1);
        return target;
    }

    private void becomeTunnel(ChannelHandlerContext ctx, TunnelTarget tunnel, boolean passthrough) {
        Channel ch = ctx.channel();
        pipeline.toTunnel(ctx.pipeline(), tunnel, passthrough);
        ch.read();
    }

    private void refuse(ChannelHandlerContext ctx, AuditRecord audit, int status, String reason) {
        audit.status(status);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connect", audit.fields()));
        pipeline.answerAndClose(ctx.channel(), Responses.error(ctx.alloc(), status, reason, null));
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        swallowLast = false;
    }

}
