package dev.sallyport.proxy.internal;

import dev.sallyport.policy.Decision;
import dev.sallyport.proxy.internal.AuditRecord;

/**
 * The destination a CONNECT (or a transparent connection's original destination) opened: every request inside the
 * tunnel must name it. {@code host} is normalized.
 *
 * @param sni     the server name the client sent, null when it sent none (IP-literal targets only)
 * @param arrival {@link #EXPLICIT} or {@link #TRANSPARENT}: what every audit record of the tunnel says
 * @param carries what the client speaks inside: TLS (intercepted), or plain HTTP (a transparent connection whose
 *                first bytes were not a TLS handshake: its requests go upstream in cleartext)
 */
public record TunnelTarget(String host, int port, Decision decision, String sni, AuditRecord audit, String arrival,
                           Carries carries) {

    /** What the client speaks inside the tunnel. */
    public enum Carries { TLS, PLAIN_HTTP }

    /** A tunnel that carries TLS. */
    public TunnelTarget(String host, int port, Decision decision, String sni, AuditRecord audit, String arrival) {
        this(host, port, decision, sni, audit, arrival, Carries.TLS);
    }

    /** A client that asked the proxy (a CONNECT, an absolute-form request). */
    public static final String EXPLICIT = "explicit";
    /** A connection captured on its way elsewhere. */
    public static final String TRANSPARENT = "transparent";

    /** A CONNECT's. */
    public TunnelTarget(String host, int port, Decision decision, String sni, AuditRecord audit) {
        this(host, port, decision, sni, audit, EXPLICIT);
    }

    public TunnelTarget withSni(String value) {
        return new TunnelTarget(host, port, decision, value, audit, arrival, carries);
    }

    /** The same target, spoken to in plain HTTP. */
    public TunnelTarget asPlainHttp() {
        return new TunnelTarget(host, port, decision, null, audit, arrival, Carries.PLAIN_HTTP);
    }
}
