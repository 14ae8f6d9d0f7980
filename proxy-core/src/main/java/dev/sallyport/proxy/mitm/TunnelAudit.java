package dev.sallyport.proxy.mitm;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.http.TunnelTarget;
import dev.sallyport.proxy.internal.ProxyContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Records a tunnel refused after the CONNECT was allowed (non-TLS bytes, SNI mismatch, TLS failure). */
final class TunnelAudit {

    private static final Logger LOGGER = LoggerFactory.getLogger(TunnelAudit.class);

    private TunnelAudit() {}

    static void refused(ProxyContext context, TunnelTarget tunnel, String reason, String message) {
        tunnel.audit().denied(reason);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "tunnel", tunnel.audit().fields()));
        LOGGER.info("client {} => {}:{}: tunnel refused: {}", tunnel.audit().client(), tunnel.host(), tunnel.port(),
                message);
    }
}
