package dev.sallyport.policy;

/** Machine-readable reason codes of {@link Decision#reason()}, as written to the audit record. */
public final class Reasons {

    /** An allow rule matched. */
    public static final String ALLOWED = "allowed_by_rule";
    /** A deny rule matched. */
    public static final String DENIED = "denied_by_rule";
    /** No rule matched at all. */
    public static final String NO_MATCHING_RULE = "no_matching_rule";
    /** A rule matched the host and port but not the method (and no later rule matched). */
    public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
    /** A rule matched the host, port and method but not the path (and no later rule matched). */
    public static final String PATH_NOT_ALLOWED = "path_not_allowed";
    /** A rule matched the host but not the port (and no later rule matched). */
    public static final String PORT_NOT_ALLOWED = "port_not_allowed";
    /** A rule matched the host and port but not the client identity (and no later rule matched). */
    public static final String CLIENT_NOT_ALLOWED = "client_not_allowed";
    /** The host is not a valid name or canonical IP literal. */
    public static final String INVALID_HOST = "invalid_host";
    /** The path is ambiguous or malformed (see {@link PathNormalizer}). */
    public static final String INVALID_PATH = "invalid_path";
    /** The method is not an uppercase token. */
    public static final String INVALID_METHOD = "invalid_method";
    /** The port is outside 1..65535. */
    public static final String INVALID_PORT = "invalid_port";
    /** A URL given to explain could not be used (userinfo, unknown scheme, no host). */
    public static final String INVALID_URL = "invalid_url";
    /** onDial: the address is in network.deny. */
    public static final String PRIVATE_ADDRESS = "private_address";
    /** onDial: the address and port are the proxy's own listen or admin address (a loop). */
    public static final String PROXY_ADDRESS = "proxy_address";
    /** onDial: the address is in network.deny but an allow_private entry covers it. */
    public static final String ALLOWED_PRIVATE = "allowed_private";
    /** onDial: the address is not in network.deny. */
    public static final String ADDRESS_ALLOWED = "address_allowed";

    private Reasons() {}
}
