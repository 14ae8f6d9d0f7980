package dev.sallyport.proxy.http2;

import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.Http2Fields;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.Http2Headers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads one HTTP/2 request head into an {@link ExchangeRequest}, refusing what must never reach an HTTP/1.1
 * upstream: missing or misplaced pseudo-header fields, a method other than a token or {@code CONNECT}, a
 * {@code :path} with a byte that would end an HTTP/1.1 request line, connection-specific fields
 * ({@code Connection}, {@code Transfer-Encoding}, {@code Upgrade}, ...), CR, LF or NUL in a value, a
 * {@code :authority} or {@code Host} that does not name the tunnel's target, and a {@code content-length} that is not
 * one number. What one stream carries stays one request on the other side. Pure: no I/O.
 */
final class Http2Requests {

    /** What reading the head gave. */
    sealed interface Parsed {}

    record Read(ExchangeRequest request, long contentLength) implements Parsed {}

    /** Refuse with {@code status}; {@code target} is the destination the request named, when it could be read. */
    record Refuse(int status, String reason, Authority target) implements Parsed {}

    /** Fields HTTP/2 forbids in requests (RFC 9113 8.2.2); {@code te} is allowed with the value {@code trailers}. */
    private static final Set<String> REQUEST_PSEUDO = Set.of(":method", ":scheme", ":authority", ":path");

    private Http2Requests() {}

    static Parsed read(Http2Headers h2, boolean endStream, TunnelTarget tunnel, ExchangeRequest.Origin origin) {
        Authority tunnelTarget = new Authority(tunnel.host(), tunnel.port());
        List<Map.Entry<CharSequence, CharSequence>> fields = new ArrayList<>(h2.size());
        boolean regularSeen = false;
        for (Map.Entry<CharSequence, CharSequence> e : h2) {
            String name = e.getKey().toString();
            if (name.startsWith(":")) {
                if (regularSeen || !REQUEST_PSEUDO.contains(name) || h2.getAll(name).size() != 1) {
                    return new Refuse(400, "malformed_pseudo_header", tunnelTarget);
                }
            } else {
                regularSeen = true;
                fields.add(e);
            }
        }
        CharSequence methodText = h2.method();
        CharSequence pathText = h2.path();
        CharSequence scheme = h2.scheme();
        if (methodText == null) {
            return new Refuse(400, "malformed_pseudo_header", tunnelTarget);
        }
        String method = methodText.toString();
        if (method.equals("CONNECT")) {
            return new Refuse(400, "h2_connect_refused", tunnelTarget);
        }
        if (pathText == null || scheme == null || !isToken(method)) {
            return new Refuse(400, "malformed_pseudo_header", tunnelTarget);
        }
        if (!scheme.toString().equals("https")) {
            return new Refuse(400, "scheme_mismatch", tunnelTarget);
        }
        String path = pathText.toString();
        if (!path.startsWith("/") || !visibleAscii(path) || path.indexOf('#') >= 0) {
            return new Refuse(400, "malformed_request_target", tunnelTarget);
        }
        HttpHeaders headers = new DefaultHttpHeaders();
        List<String> cookies = new ArrayList<>(1);
        for (Map.Entry<CharSequence, CharSequence> e : fields) {
            String name = e.getKey().toString();
            String value = e.getValue().toString();
            if (Http2Fields.CONNECTION_SPECIFIC.contains(name) || (name.equals("te") && !value.equals("trailers"))) {
                return new Refuse(400, "connection_specific_header", tunnelTarget);
            }
            if (!isToken(name) || !name.equals(name.toLowerCase(java.util.Locale.ROOT))) {
                return new Refuse(400, "invalid_header_name", tunnelTarget);
            }
            if (!fieldValue(value)) {
                return new Refuse(400, "invalid_header_value", tunnelTarget);
            }
            if (name.equals("cookie")) {
                cookies.add(value);     // HTTP/2 may split cookies; HTTP/1.1 carries one field (RFC 9113 8.2.3)
            } else {
                headers.add(name, value);
            }
        }
        if (!cookies.isEmpty()) {
            headers.set(HttpHeaderNames.COOKIE, String.join("; ", cookies));
        }
        CharSequence authorityText = h2.authority();
        List<String> hosts = headers.getAll(HttpHeaderNames.HOST);
        if (hosts.size() > 1) {
            return new Refuse(400, "duplicate_host", tunnelTarget);
        }
        if (authorityText == null && hosts.isEmpty()) {
            return new Refuse(400, "missing_authority", tunnelTarget);
        }
        String authority = authorityText == null ? hosts.getFirst() : authorityText.toString();
        try {
            Authority named = Authority.parse(authority, 443);
            if (!named.equals(tunnelTarget)) {
                return new Refuse(403, "host_mismatch", tunnelTarget);
            }
            if (!hosts.isEmpty() && !Authority.parse(hosts.getFirst(), 443).equals(named)) {
                return new Refuse(400, "authority_host_mismatch", tunnelTarget);
            }
        } catch (IllegalArgumentException e) {
            String reason = e.getMessage() == null ? "invalid_host" : e.getMessage();
            return new Refuse(reason.equals("userinfo_in_authority") ? 403 : 400, reason, tunnelTarget);
        }
        headers.set(HttpHeaderNames.HOST, authority);
        List<String> lengths = headers.getAll(HttpHeaderNames.CONTENT_LENGTH);
        long contentLength = -1;
        if (!lengths.isEmpty()) {
            if (lengths.size() > 1 || !digits(lengths.getFirst())) {
                return new Refuse(400, "invalid_content_length", tunnelTarget);
            }
            contentLength = Long.parseLong(lengths.getFirst());
            if (endStream && contentLength != 0) {
                return new Refuse(400, "content_length_mismatch", tunnelTarget);
            }
        }
        ExchangeRequest.BodyShape body = contentLength >= 0 ? new ExchangeRequest.BodyShape.Length(contentLength)
                : endStream ? ExchangeRequest.BodyShape.none() : ExchangeRequest.BodyShape.stream();
        return new Read(new ExchangeRequest(method, tunnelTarget, path, headers, body, UpstreamLeg.TLS,
                ExchangeRequest.Upgrade.NONE, origin), contentLength);
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean visibleAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return false;
            }
        }
        return true;
    }

    /** No CR, LF, NUL or other control byte but HTAB; no leading or trailing whitespace (RFC 9113 8.2.1). */
    private static boolean fieldValue(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f || c > 0xff) {
                return false;
            }
        }
        return s.isEmpty() || (s.charAt(0) != ' ' && s.charAt(0) != '\t' && s.charAt(s.length() - 1) != ' '
                && s.charAt(s.length() - 1) != '\t');
    }

    private static boolean digits(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
