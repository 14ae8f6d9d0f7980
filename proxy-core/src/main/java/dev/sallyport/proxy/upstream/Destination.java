package dev.sallyport.proxy.upstream;

/**
 * Where to connect and how. {@code tls}: TLS with hostname verification; {@code http}: install the HTTP client
 * codec (false for raw tunnels: passthrough and upgraded connections); {@code h2}: the exchange may go over
 * HTTP/2 when the server chooses it in ALPN (its client speaks HTTP/2; TLS only); {@code upgrade}: the request asks
 * to switch protocols (a WebSocket), which needs HTTP/1.1 whatever the server prefers.
 */
public record Destination(String host, int port, boolean tls, boolean http, boolean h2, boolean upgrade) {

    public Destination {
        if (h2 && !(tls && http && !upgrade)) {
            throw new IllegalArgumentException("h2 needs TLS and HTTP, and no upgrade: " + host + ":" + port);
        }
    }

    /** A destination that speaks HTTP/1.1 (or raw bytes) only. */
    public Destination(String host, int port, boolean tls, boolean http) {
        this(host, port, tls, http, false, false);
    }

    /**
     * True for an HTTP/1.1 client's exchange that may still go over HTTP/2 when the server speaks nothing else (it
     * refused {@code http/1.1} in ALPN).
     */
    boolean mayFallBackToH2() {
        return !h2 && tls && http && !upgrade;
    }

    /** The same destination, the exchange going over HTTP/2 when the server chooses it. */
    Destination withH2() {
        return new Destination(host, port, tls, http, true, false);
    }

    public String text() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
