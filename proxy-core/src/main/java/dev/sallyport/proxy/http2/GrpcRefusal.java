package dev.sallyport.proxy.http2;

import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import java.nio.charset.StandardCharsets;

/**
 * A refusal as a gRPC client reads one: a trailers-only response (HTTP 200, {@code grpc-status} and
 * {@code grpc-message} in one HEADERS frame that ends the stream), so that the call fails with a status that says
 * what happened instead of "HTTP status code 403, invalid content-type". The status follows gRPC's own mapping of
 * HTTP codes; the message names the proxy and the reason, as {@code X-Sallyport-Reason} does.
 */
final class GrpcRefusal {

    static final int PERMISSION_DENIED = 7;
    static final int RESOURCE_EXHAUSTED = 8;
    static final int UNAVAILABLE = 14;
    static final int INTERNAL = 13;
    static final int UNAUTHENTICATED = 16;
    static final int UNKNOWN = 2;

    private GrpcRefusal() {}

    /** The gRPC status for a refusal the proxy would answer with HTTP {@code status}. */
    static int code(int status) {
        return switch (status) {
            case 401, 407 -> UNAUTHENTICATED;
            case 403 -> PERMISSION_DENIED;
            case 413, 429, 431 -> RESOURCE_EXHAUSTED;
            case 400 -> INTERNAL;
            case 502, 503, 504 -> UNAVAILABLE;
            default -> UNKNOWN;
        };
    }

    static Http2Headers headers(int status, String reason, String detail) {
        String message = "sallyport: " + reason + (detail == null || detail.isBlank() ? "" : ": " + detail);
        return new DefaultHttp2Headers()
                .status("200")
                .set("content-type", "application/grpc")
                .setInt("grpc-status", code(status))
                .set("grpc-message", percentEncoded(message))
                .set("x-sallyport-reason", reason);
    }

    /** gRPC's encoding of {@code grpc-message}: UTF-8, with bytes outside printable ASCII and '%' as %XX. */
    static String percentEncoded(String message) {
        StringBuilder out = new StringBuilder(message.length());
        for (byte b : message.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '%') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }
}
