package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.policy.Decision;
import dev.sallyport.policy.TlsMode;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.limits.ClientKey;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.channel.ChannelHandlerContext;

/**
 * What every front end that opens a tunnel does before the first tunnel byte, whether the target came from a
 * CONNECT or from a transparent connection's original destination: decide host and port ({@code onConnect}, no DNS),
 * refuse while draining or when the audit log cannot take records, count the tunnel against its client's and the
 * proxy's limits, admit the {@code connect} record, and record the tunnel's end when the connection closes.
 */
final class TunnelOpener {

    /** How a refusal is answered: the status and reason, once the audit record says why. */
    @FunctionalInterface
    interface Refusal {
        void refuse(int status, String reason);
    }

    private final ProxyContext context;
    private final ByteCounter counter;

    TunnelOpener(ProxyContext context, ByteCounter counter) {
        this.context = context;
        this.counter = counter;
    }

    /**
     * The tunnel to {@code host:port} ({@code audit} gets target, decision and tls), or null once {@code refusal}
     * was called.
     */
    TunnelTarget open(ChannelHandlerContext ctx, String host, int port, String arrival, AuditRecord audit,
                      Refusal refusal) {
        ClientIdentity identity = ClientIdentity.of(ctx.channel());
        ClientKey client = ClientIdentity.limitKey(ctx.channel());
        audit.target(host, port).arrival(arrival).identity(identity.name());
        Decision decision = identity.engine(context.engine()).onConnect(host, port, identity.policy());
        audit.decision(decision);
        boolean passthrough = decision.tls() == TlsMode.PASSTHROUGH;
        if (!decision.permitsTraffic()) {
            audit.tls("none");
            refusal.refuse(403, decision.reason());   // refused before any TLS
            return null;
        }
        audit.tls(passthrough ? "passthrough" : "intercepted");
        if (context.draining() || !context.auditAccepting()) {
            audit.denied(context.draining() ? "shutting_down" : "audit_unavailable");
            refusal.refuse(503, audit.fields().reason());
            return null;
        }
        switch (context.tryOpenTunnel(client)) {
            case CLIENT_LIMIT -> {
                audit.denied(ClientSlots.TUNNEL_LIMIT);
                refusal.refuse(429, ClientSlots.TUNNEL_LIMIT);
                return null;
            }
            case PROXY_LIMIT -> {
                audit.denied("too_many_tunnels");
                refusal.refuse(503, "too_many_tunnels");
                return null;
            }
            case ADMITTED -> { }
        }
        audit.status(200);
        if (!context.admit(new ProxyEvent.Decided(context.clock().instant(), "connect", audit.fields()))) {
            context.tunnelClosed(client);   // nothing is relayed that the audit log has not taken
            audit.denied("audit_unavailable");
            refusal.refuse(503, "audit_unavailable");
            return null;
        }
        TunnelTarget tunnel = new TunnelTarget(host, port, decision, null, audit, arrival);
        opened(ctx, tunnel, client);
        return tunnel;
    }

    private void opened(ChannelHandlerContext ctx, TunnelTarget tunnel, ClientKey client) {
        context.emit(new ProxyEvent.TunnelOpened(context.clock().instant()));
        long started = System.nanoTime();
        long receivedBefore = counter.received;
        long sentBefore = counter.sent;
        ctx.channel().closeFuture().addListener(f -> {
            context.tunnelClosed(client);
            context.emit(new ProxyEvent.TunnelClosed(context.clock().instant()));
            AuditRecord audit = tunnel.audit();
            audit.bytes(counter.received - receivedBefore, counter.sent - sentBefore)
                    .duration((System.nanoTime() - started) / 1_000_000);
            context.emit(new ProxyEvent.TunnelEnded(context.clock().instant(), "tunnel_end", audit.fields()));
        });
    }
}
