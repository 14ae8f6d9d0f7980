package dev.sallyport.policy;

import java.util.Objects;

/**
 * One {@code network.allow_private} entry: a network ({@code 10.20.0.0/16:5432}, {@code [fd00::1]:443})
 * or an exact host name ({@code git.corp.example:443}), always with a port. Exactly one of cidr and host.
 *
 * @param cidr nullable
 * @param host nullable: a normalized host name
 */
public record PrivateException(Cidr cidr, String host, int port) {

    public PrivateException {
        if ((cidr == null) == (host == null)) {
            throw new IllegalArgumentException("allow_private: (expected: exactly one of a network and a host)");
        }
        if (host != null && !HostNames.normalize(host).equals(host)) {
            throw new IllegalArgumentException("host: '" + host + "' (expected: normalized)");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
        }
    }

    /**
     * Parses {@code CIDR_OR_IP:PORT} or {@code HOST:PORT}, IPv6 in brackets; throws IllegalArgumentException.
     */
    public static PrivateException parse(String s) {
        Objects.requireNonNull(s, "allow_private entry");
        String shown = "'" + HostNames.printable(s) + "'";
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException(shown + " has no port");
        }
        String target = s.substring(0, colon);
        int port = Ports.parse(s.substring(colon + 1), 1);
        if (target.startsWith("[")) {
            if (!target.endsWith("]")) {
                throw new IllegalArgumentException(shown + " has an unclosed '['");
            }
            target = target.substring(1, target.length() - 1);
            if (target.indexOf(':') < 0) {
                throw new IllegalArgumentException(shown + " has brackets around something not IPv6");
            }
        } else if (target.indexOf(':') >= 0) {
            throw new IllegalArgumentException(shown + " has an IPv6 address without brackets");
        }
        if (target.indexOf('/') >= 0 || IpAddress.parseStrict(target).isPresent()) {
            return new PrivateException(Cidr.parse(target), null, port);
        }
        String host = HostNames.normalize(target);
        if (HostNames.isIpLiteral(host)) {
            return new PrivateException(Cidr.parse(host), null, port);
        }
        return new PrivateException(null, host, port);
    }

    @Override
    public String toString() {
        String t = cidr != null ? (cidr.base().isV4() ? cidr.toString() : "[" + cidr + "]") : host;
        return t + ":" + port;
    }
}
