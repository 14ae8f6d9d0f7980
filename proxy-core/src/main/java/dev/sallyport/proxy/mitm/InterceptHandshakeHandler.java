package dev.sallyport.proxy.mitm;

import dev.sallyport.proxy.internal.ClientPhases;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.internal.ProxyContext;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SniCompletionEvent;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

/**
 * Waits for the client-side TLS handshake of an intercepted tunnel. On success it installs the HTTP phase
 * (bound to the CONNECT target and the SNI seen) and removes itself; a refused SNI or a failed handshake is
 * audited and closes the connection.
 */
public final class InterceptHandshakeHandler extends ChannelInboundHandlerAdapter {

    private final ProxyContext context;
    private final ClientPhases phases;
    private TunnelTarget tunnel;

    public InterceptHandshakeHandler(ProxyContext context, TunnelTarget tunnel, ClientPhases phases) {
        this.context = context;
        this.tunnel = tunnel;
        this.phases = phases;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SniCompletionEvent sni) {
            if (sni.isSuccess()) {
                tunnel = tunnel.withSni(sni.hostname());
                tunnel.audit().sni(sni.hostname());
            } else {
                refuse(ctx, sni.cause());
            }
        } else if (evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                io.netty.channel.Channel ch = ctx.channel();
                phases.toHttp(ctx.pipeline(), tunnel);
                ch.read();
            } else {
                refuse(ctx, done.cause());
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        refuse(ctx, cause);
    }

    private void refuse(ChannelHandlerContext ctx, Throwable cause) {
        TunnelAudit.failed(context, tunnel, cause);   // once per tunnel
        ctx.close();
    }
}
