package dev.sallyport.proxy.inject;

/**
 * A response body that had to be decoded to be scrubbed could not be: unsupported or broken encoding,
 * or more decoded bytes than allowed (a zip bomb). The exchange must fail closed: answer
 * {@code 502} with {@code X-Sallyport-Reason: response_decode_failed} if nothing was sent yet, otherwise
 * close the client connection without ending the response. Never forward the undecoded bytes.
 * The message names the problem, never body content.
 */
public final class ResponseDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    public ResponseDecodeException(String message) {
        super(message);
    }

    /** Always {@link SecretReasons#RESPONSE_DECODE_FAILED}. */
    public String reason() {
        return SecretReasons.RESPONSE_DECODE_FAILED;
    }
}
