package dev.sallyport.proxy.inject;

/** Machine-readable reason codes for refusals caused by secrets (the audit {@code reason} field). */
public final class SecretReasons {

    /**
     * A placeholder came from a client the secret is not bound to ({@code clients:}): another sandbox's, never
     * swapped.
     */
    public static final String WRONG_CLIENT = "secret_wrong_client";
    /** A placeholder (or a real value) was sent to a host the secret is not bound to. */
    public static final String WRONG_HOST = "secret_wrong_host";
    /**
     * A placeholder on its own host was in a header not listed for it, in the URL, in the body, or in an encoded
     * form, and its secret says {@code elsewhere_on_own_hosts: refuse}.
     */
    public static final String WRONG_PLACE = "secret_wrong_place";
    /**
     * A header or the URL carries a token shaped like a derived placeholder ({@code sallyport-ph-} and 26 base32
     * characters) that is none of the proxy's: one from an earlier run, another policy or another state folder.
     */
    public static final String UNKNOWN_PLACEHOLDER = "secret_unknown_placeholder";
    /**
     * A placeholder on its own host, in a listed header, but the request goes upstream in cleartext and the
     * secret does not say {@code allow_cleartext: true}.
     */
    public static final String CLEARTEXT = "secret_cleartext";
    /** A request to the hosts of a {@code require: true} secret did not carry its placeholder. */
    public static final String REQUIRED = "secret_required";
    /** The secret is needed (placeholder sent, or required) but its source could not be read (lazy). */
    public static final String UNAVAILABLE = "secret_unavailable";
    /** A response that must be scrubbed could not be decoded (answer 502, fail closed). */
    public static final String RESPONSE_DECODE_FAILED = "response_decode_failed";

    private SecretReasons() {}
}
