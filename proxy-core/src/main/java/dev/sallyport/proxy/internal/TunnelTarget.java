package dev.sallyport.proxy.internal;

import dev.sallyport.policy.Decision;
import dev.sallyport.proxy.internal.AuditRecord;

/**
 * The destination a CONNECT opened: every request inside the tunnel must name it. {@code host} is normalized.
 *
 * @param sni the server name the client sent, null when it sent none (IP-literal targets only)
 */
public record TunnelTarget(String host, int port, Decision decision, String sni, AuditRecord audit) {

    public TunnelTarget withSni(String value) {
        return new TunnelTarget(host, port, decision, value, audit);
    }
}
