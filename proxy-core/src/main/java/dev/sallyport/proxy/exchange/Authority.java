package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.HostNames;

/**
 * A {@code host[:port]} as written in a request target, Host header or CONNECT line, parsed strictly:
 * no userinfo, no empty or out-of-range port, brackets only around IPv6 literals. {@code host} is normalized.
 */
public record Authority(String host, int port) {

    /** Parses and normalizes; throws IllegalArgumentException with the reason code as message. */
    public static Authority parse(String text, int defaultPort) {
        if (text.isEmpty() || text.indexOf('@') >= 0) {
            throw new IllegalArgumentException(text.isEmpty() ? "invalid_host" : "userinfo_in_authority");
        }
        String host;
        String portText = null;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("invalid_host");
            }
            host = text.substring(1, close);
            String rest = text.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw new IllegalArgumentException("invalid_host");
                }
                portText = rest.substring(1);
            }
            if (host.indexOf(':') < 0 || host.indexOf('%') >= 0) {
                throw new IllegalArgumentException("invalid_host");
            }
        } else {
            int colon = text.indexOf(':');
            if (colon >= 0 && text.indexOf(':', colon + 1) >= 0) {
                throw new IllegalArgumentException("invalid_host");   // bare IPv6 without brackets
            }
            host = colon < 0 ? text : text.substring(0, colon);
            portText = colon < 0 ? null : text.substring(colon + 1);
        }
        int port = defaultPort;
        if (portText != null) {
            if (portText.isEmpty() || portText.length() > 5 || !portText.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("invalid_port");
            }
            port = Integer.parseInt(portText);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("invalid_port");
        }
        String normalized;
        try {
            normalized = HostNames.normalize(host);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid_host");
        }
        return new Authority(normalized, port);
    }

    /** The form used on the wire and in error lines: IPv6 literals in brackets. */
    public String text() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
