package dev.sallyport.proxy.upstream;

/**
 * Where to connect and how. {@code tls}: TLS with hostname verification; {@code http}: install the HTTP client
 * codec (false for raw tunnels: passthrough and upgraded connections); {@code h2}: the exchange may go over
 * HTTP/2 when the server chooses it in ALPN (its client speaks HTTP/2; TLS only).
 */
public record Destination(String host, int port, boolean tls, boolean http, boolean h2) {

    public Destination {
        if (h2 && !(tls && http)) {
            throw new IllegalArgumentException("h2 needs TLS and HTTP: " + host + ":" + port);
        }
    }

    /** A destination that speaks HTTP/1.1 (or raw bytes) only. */
    public Destination(String host, int port, boolean tls, boolean http) {
        this(host, port, tls, http, false);
    }

    public String text() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
