package dev.sallyport.proxy.inject;

/**
 * How a request travels from the proxy to its upstream: what {@link SecretStore#exchange(String, UpstreamLeg)}
 * needs to know to inject a value only where no one on the way can read it.
 */
public enum UpstreamLeg {
    /** Over TLS with the upstream's certificate checked (the requests of an intercepted tunnel). */
    TLS,
    /**
     * In cleartext (an absolute-form {@code http://} request): a placeholder for a secret bound to the host is
     * refused ({@code secret_cleartext}) unless the secret says {@code allow_cleartext: true}.
     */
    CLEARTEXT
}
