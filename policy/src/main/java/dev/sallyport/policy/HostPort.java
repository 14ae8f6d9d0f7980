package dev.sallyport.policy;

import java.util.Objects;

/**
 * A host and port, as in {@code proxy.listen}. {@code host} is a normalized name or a canonical IP literal
 * (IPv6 without brackets); port 0 means "any free port" for a listener.
 */
public record HostPort(String host, int port) {

    public HostPort {
        Objects.requireNonNull(host, "host");
        if (!HostNames.normalize(host).equals(host)) {
            throw new IllegalArgumentException("host: '" + host + "' (expected: normalized, e.g. '"
                    + HostNames.normalize(host) + "')");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
        }
    }

    /** Parses {@code HOST:PORT} or {@code [IPV6]:PORT}; throws IllegalArgumentException with the reason. */
    public static HostPort parse(String s) {
        Objects.requireNonNull(s, "host:port");
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("'" + HostNames.printable(s) + "' has no port");
        }
        String host = s.substring(0, colon);
        if (host.indexOf(':') >= 0 && !(host.startsWith("[") && host.endsWith("]"))) {
            throw new IllegalArgumentException("'" + HostNames.printable(s) + "' has an IPv6 address without brackets");
        }
        return new HostPort(HostNames.normalize(host), Ports.parse(s.substring(colon + 1), 0));
    }

    /** {@code host:port}, with brackets around IPv6. */
    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
