package dev.sallyport.proxy.mitm;

import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.internal.ClientPhases;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.RelayHandler;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import dev.sallyport.proxy.upstream.UpstreamFailure;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.AbstractSniHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * A {@code tls: passthrough} tunnel: reads the whole ClientHello (Netty's parser handles one split across
 * packets or records), requires its SNI to name the CONNECT target, dials the checked address and relays bytes
 * both ways without interception. The buffered ClientHello is the first thing relayed.
 */
public final class PassthroughHandler extends AbstractSniHandler<UpstreamLease> {

    private final ProxyContext context;
    private final UpstreamConnector connector;
    private final TunnelTarget tunnel;
    private final ClientPhases phases;
    private final LongConsumer upCounter;
    private final LongConsumer downCounter;
    private final long helloTimeoutMillis;
    private final SniVerdict verdict;
    private ScheduledFuture<?> helloDeadline;

    public PassthroughHandler(ProxyContext context, UpstreamConnector connector, TunnelTarget tunnel,
                              ClientPhases phases, LongConsumer upCounter, LongConsumer downCounter) {
        super(0);   // the ClientHello deadline is ours: Netty's would close the tunnel without a word
        this.helloTimeoutMillis = context.policy().proxy().timeouts().tls().toMillis();
        this.context = context;
        this.connector = connector;
        this.tunnel = tunnel;
        this.phases = phases;
        this.upCounter = upCounter;
        this.downCounter = downCounter;
        this.verdict = new SniVerdict(tunnel.host());
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        super.handlerAdded(ctx);
        helloDeadline = ctx.executor().schedule(() -> {
            TunnelAudit.refused(context, tunnel, TunnelAudit.CLIENT_TLS_FAILED,
                    "no complete TLS ClientHello within " + helloTimeoutMillis + " ms");
            ctx.close();
        }, helloTimeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
        helloDeadline.cancel(false);
        super.handlerRemoved0(ctx);
    }

    @Override
    protected Future<UpstreamLease> lookup(ChannelHandlerContext ctx, String hostname) {
        helloDeadline.cancel(false);
        SniRefused refused = verdict.check(hostname);
        if (refused != null) {
            return ctx.executor().newFailedFuture(refused);
        }
        tunnel.audit().sni(hostname);
        return connector.acquire(new Destination(tunnel.host(), tunnel.port(), false, false), context.engine(),
                ctx.channel().eventLoop(), tunnel.audit().client());
    }

    @Override
    protected void onLookupComplete(ChannelHandlerContext ctx, String hostname, Future<UpstreamLease> future) {
        if (!future.isSuccess()) {
            switch (future.cause()) {
                case SniRefused sni -> TunnelAudit.refused(context, tunnel, sni.reason(), sni.getMessage());
                case UpstreamFailure up -> {
                    tunnel.audit().ip(up.ip());
                    TunnelAudit.refused(context, tunnel, up.reason(), up.getMessage());
                }
                default -> TunnelAudit.refused(context, tunnel, "upstream_failed", future.cause().toString());
            }
            ctx.close();
            return;
        }
        UpstreamLease lease = future.getNow();
        Channel upstream = lease.channel();
        Channel client = ctx.channel();
        if (!client.isActive()) {
            upstream.close();
            return;
        }
        tunnel.audit().ip(lease.ip());
        upstream.pipeline().addLast(new RelayHandler(client, downCounter));
        client.closeFuture().addListener(f -> upstream.close());
        phases.toPassthroughRelay(ctx.pipeline(), new RelayHandler(upstream, upCounter));
    }

    /** A ClientHello too long or malformed, or a client reset mid-hello: one audited refusal, no stack trace. */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        TunnelAudit.failed(context, tunnel, cause);
        ctx.close();
    }
}
