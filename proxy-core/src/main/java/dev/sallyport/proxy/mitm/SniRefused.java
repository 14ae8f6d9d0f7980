package dev.sallyport.proxy.mitm;

/** The ClientHello's server name does not name the CONNECT target (or is missing for a name target). */
final class SniRefused extends Exception {

    private static final long serialVersionUID = 1L;

    private final String reason;

    SniRefused(String reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    String reason() {
        return reason;
    }

    /** Null when {@code sni} is acceptable for a tunnel to {@code host}, else the refusal. */
    static SniRefused check(String sni, String host) {
        if (sni == null) {
            return dev.sallyport.policy.HostNames.isIpLiteral(host) ? null
                    : new SniRefused("sni_missing", "TLS ClientHello without SNI for a tunnel to " + host);
        }
        String normalized;
        try {
            normalized = dev.sallyport.policy.HostNames.normalize(sni);
        } catch (IllegalArgumentException e) {
            return new SniRefused("sni_mismatch", "TLS SNI is not a valid name");
        }
        return normalized.equals(host) ? null
                : new SniRefused("sni_mismatch", "TLS SNI " + normalized + " does not name the CONNECT target " + host);
    }

    static SniRefused find(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SniRefused refused) {
                return refused;
            }
        }
        return null;
    }
}
