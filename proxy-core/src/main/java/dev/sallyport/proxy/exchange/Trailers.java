package dev.sallyport.proxy.exchange;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.Locale;
import java.util.Set;

/**
 * The fields a trailer section may not carry (RFC 9110 6.5.1): framing, routing, connection handling,
 * authentication, cookies, request modifiers and content metadata, and the method and URL overrides the proxy
 * decides on. A recipient that merged them into the head (some do) would frame, route or authorize the message by
 * something the proxy never checked. A request with one is refused ({@code 400 forbidden_trailer}) by the framing
 * guard as it reads the trailer section; in a response they are removed.
 */
public final class Trailers {

    public static final String FORBIDDEN = "forbidden_trailer";

    private static final Set<String> NAMES = Set.of("content-length", "transfer-encoding", "host", "connection",
            "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "authorization", "proxy-authorization",
            "www-authenticate", "proxy-authenticate", "cookie", "set-cookie", "expect", "max-forwards", "range",
            "if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "if-range", "cache-control",
            "pragma", "content-encoding", "content-type", "content-range", "content-location", "location", "age",
            "expires", "date", "vary", "retry-after", "x-http-method-override", "x-http-method", "x-method-override",
            "x-original-url", "x-rewrite-url", "forwarded", "x-forwarded-for", "x-forwarded-host",
            "x-forwarded-proto");

    private Trailers() {}

    /** True for a field name (lower case) that a trailer section may not carry. */
    public static boolean isForbidden(String lowerCaseName) {
        return NAMES.contains(lowerCaseName);
    }

    /** Removes the forbidden fields from a response's trailers. */
    static void strip(HttpHeaders trailers) {
        if (!trailers.isEmpty()) {
            trailers.names().stream().filter(n -> NAMES.contains(n.toLowerCase(Locale.ROOT))).toList()
                    .forEach(trailers::remove);
        }
    }
}
