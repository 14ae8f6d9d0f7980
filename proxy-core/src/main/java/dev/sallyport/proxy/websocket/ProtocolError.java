package dev.sallyport.proxy.websocket;

/**
 * A frame sequence the proxy will not relay: the WebSocket is closed with {@code code} (RFC 6455 7.4.1) and the
 * one-line {@code reason} (also the close frame's reason, so at most 123 bytes, ASCII).
 */
record ProtocolError(int code, String reason) {

    static final int PROTOCOL_ERROR = 1002;
    static final int POLICY_VIOLATION = 1008;
    static final int TOO_BIG = 1009;
    static final int INTERNAL_ERROR = 1011;

    ProtocolError {
        if (code < 1000 || code > 4999) {
            throw new IllegalArgumentException("code: " + code + " (expected: 1000 to 4999)");
        }
        if (reason.length() > 123 || !reason.chars().allMatch(c -> c >= 0x20 && c < 0x7F)) {
            throw new IllegalArgumentException("reason: " + reason.length() + " chars (expected: at most 123 ASCII)");
        }
    }
}
