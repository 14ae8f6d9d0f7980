package dev.sallyport.proxy.upstream;

/**
 * Where to connect and how. {@code tls}: TLS with hostname verification; {@code http}: install the HTTP client
 * codec (false for raw tunnels: passthrough and upgraded connections).
 */
public record Destination(String host, int port, boolean tls, boolean http) {

    public String text() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
