package dev.sallyport.proxy.mitm;

import dev.sallyport.policy.TlsMode;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.internal.ClientPhases;
import dev.sallyport.proxy.internal.ProxyContext;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * The first byte in a tunnel must start a TLS handshake record (0x16): anything else (plain HTTP, SSH, random
 * bytes) is refused, audited, and the connection closed. Removes itself after the first byte. The one exception is a
 * transparent connection to an intercepted target (a client that never asked the proxy, speaking plain HTTP to
 * port 80 or another port a rule allows): it is read as HTTP, bound to the target, each request decided in full and
 * sent upstream in cleartext, as an explicit {@code http://} request would be. Bytes that are not HTTP are then
 * refused by the HTTP codec ({@code 400}).
 */
public final class TlsRecordCheck extends ChannelInboundHandlerAdapter {

    private static final int HANDSHAKE = 0x16;

    private final ProxyContext context;
    private final TunnelTarget tunnel;
    private final ClientPhases phases;

    public TlsRecordCheck(ProxyContext context, TunnelTarget tunnel, ClientPhases phases) {
        this.context = context;
        this.tunnel = tunnel;
        this.phases = phases;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf && !buf.isReadable()) {
            buf.release();
            ctx.read();
            return;
        }
        if (msg instanceof ByteBuf buf && buf.getUnsignedByte(buf.readerIndex()) == HANDSHAKE) {
            phases.tlsChecked(ctx.pipeline());
            ctx.fireChannelRead(buf);
            return;
        }
        if (msg instanceof ByteBuf buf && TunnelTarget.TRANSPARENT.equals(tunnel.arrival())
                && tunnel.decision().tls() != TlsMode.PASSTHROUGH) {
            tunnel.audit().tls("none");
            phases.toPlainHttp(ctx.pipeline(), tunnel.asPlainHttp());
            ctx.fireChannelRead(buf);
            return;
        }
        ReferenceCountUtil.release(msg);
        TunnelAudit.refused(context, tunnel, "not_tls", "the first bytes in the tunnel are not a TLS handshake");
        ctx.close();
    }
}
