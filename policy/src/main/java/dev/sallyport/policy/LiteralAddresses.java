package dev.sallyport.policy;

/**
 * {@code network.literal_addresses}: what {@code sallyport run}'s transparent capture does with a connection to an IP
 * address that the DNS stub did not hand out (a literal in a URL, a hard-coded address). {@link #NO_ROUTE}, the
 * default: the sandbox has no route to it and the connect fails at once. {@link #CAPTURE}: TCP to any address (IPv4,
 * and IPv6 where the sandbox captures it) lands on the proxy's transparent listener and is decided as an IP-literal
 * CONNECT ({@code cidrs} rules, {@code network.deny}), audited like every other transparent connection. The sandbox's
 * own loopback stays its own.
 */
public enum LiteralAddresses {
    NO_ROUTE, CAPTURE;

    /** The policy file's word for it. */
    public String yamlName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
