package dev.sallyport.proxy.mitm;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.internal.ProxyContext;
import io.netty.handler.codec.DecoderException;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records a tunnel refused after the CONNECT was allowed (non-TLS bytes, SNI mismatch, a malformed or oversized
 * ClientHello, a failed handshake): one audit record and one log line (who, what, what was expected) per tunnel,
 * whatever else fails on the way down. Stack traces are for DEBUG only: the bytes come from the client.
 */
final class TunnelAudit {

    private static final Logger LOGGER = LoggerFactory.getLogger(TunnelAudit.class);

    /** The tunnel's first bytes parse as no acceptable ClientHello (too long, malformed). */
    static final String CLIENT_HELLO_INVALID = "client_hello_invalid";
    static final String CLIENT_TLS_FAILED = "client_tls_failed";

    private TunnelAudit() {}

    /** Refuses the tunnel for reason (an audit reason code); message says what happened. Once per tunnel. */
    static void refused(ProxyContext context, TunnelTarget tunnel, String reason, String message) {
        if ("deny".equals(tunnel.audit().decision())) {
            return;   // already refused: what fails while it closes is a consequence, not news
        }
        tunnel.audit().denied(reason);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "tunnel", tunnel.audit().fields()));
        String expected = expected(reason, tunnel.host());
        LOGGER.info("client {} => {}:{}: tunnel refused: {}{}", tunnel.audit().client(), tunnel.host(), tunnel.port(),
                message, expected == null || message.contains("(expected") ? "" : " (expected: " + expected + ")");
    }

    /** Refuses the tunnel for an exception raised before it carried traffic (SNI check, ClientHello, handshake). */
    static void failed(ProxyContext context, TunnelTarget tunnel, Throwable cause) {
        LOGGER.debug("client {} => {}:{}: tunnel failed", tunnel.audit().client(), tunnel.host(), tunnel.port(), cause);
        SniRefused sni = SniRefused.find(cause);
        if (sni != null) {
            refused(context, tunnel, sni.reason(), sni.getMessage());
        } else if (cause instanceof DecoderException && !(cause.getCause() instanceof SSLException)) {
            refused(context, tunnel, CLIENT_HELLO_INVALID, "TLS ClientHello rejected: " + describe(cause));
        } else {
            refused(context, tunnel, CLIENT_TLS_FAILED, "client TLS handshake failed: " + describe(cause));
        }
    }

    private static String expected(String reason, String host) {
        return switch (reason) {
            case "not_tls" -> "a TLS handshake record (0x16) as the first byte";
            case "sni_missing", "sni_mismatch" -> "a TLS ClientHello whose server name is " + host;
            case CLIENT_HELLO_INVALID -> "a well-formed TLS ClientHello of at most 64 KiB";
            case CLIENT_TLS_FAILED -> "a TLS 1.2 or 1.3 client that trusts the proxy's CA";
            default -> null;
        };
    }

    /** The innermost message of an exception chain: Netty wraps the engine's reason in a DecoderException. */
    private static String describe(Throwable cause) {
        Throwable t = cause;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }
}
