package dev.sallyport.proxy.inject;

/** Machine-readable reason codes for refusals caused by secrets (the audit {@code reason} field). */
public final class SecretReasons {

    /** A placeholder (or a real value) was sent to a host the secret is not bound to. */
    public static final String WRONG_HOST = "secret_wrong_host";
    /** A placeholder was in a header not listed for it, in the URL, in the body, or in an encoded form. */
    public static final String WRONG_PLACE = "secret_wrong_place";
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
