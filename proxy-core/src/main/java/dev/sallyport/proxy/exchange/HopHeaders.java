package dev.sallyport.proxy.exchange;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.List;

/**
 * Removes hop-by-hop headers (RFC 9110 7.6.1) before a message crosses the proxy, and refuses the messages whose
 * {@code Connection} header names a header that decides the framing or the target: {@code Connection:
 * Content-Length} (or {@code Transfer-Encoding}) would have the proxy forward a body without its framing, and the
 * bytes of that body would reach the upstream as a second request no policy decided; {@code Connection: Host}
 * would send a request without the name it was decided for.
 */
public final class HopHeaders {

    /** Names that {@code Connection} may never list. */
    private static final List<AsciiString> PROTECTED = List.of(HttpHeaderNames.CONTENT_LENGTH,
            HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderNames.HOST);

    /** Netty deprecated its constant (HTTP/1.0's field); a proxy still removes it. */
    private static final AsciiString KEEP_ALIVE = AsciiString.cached("keep-alive");

    private HopHeaders() {}

    /** The first protected header name that a {@code Connection} header lists (lower case), or null. */
    public static String protectedListed(HttpHeaders headers) {
        for (String name : listed(headers)) {
            if (isProtected(name)) {
                return name.toLowerCase(java.util.Locale.ROOT);
            }
        }
        return null;
    }

    /**
     * Strips hop-by-hop headers; keeps {@code Connection: upgrade} and {@code Upgrade} when upgrading. Never removes
     * a protected name even when listed (callers refuse such messages first; this is the second lock).
     */
    public static void strip(HttpHeaders headers, boolean keepUpgrade) {
        for (String name : listed(headers)) {
            if (!(keepUpgrade && name.equalsIgnoreCase("upgrade")) && !isProtected(name)) {
                headers.remove(name);
            }
        }
        headers.remove(HttpHeaderNames.CONNECTION);
        headers.remove("Proxy-Connection");
        headers.remove(KEEP_ALIVE);
        headers.remove(HttpHeaderNames.PROXY_AUTHORIZATION);
        headers.remove(HttpHeaderNames.PROXY_AUTHENTICATE);
        headers.remove(HttpHeaderNames.TE);
        headers.remove(HttpHeaderNames.TRAILER);
        if (keepUpgrade) {
            headers.set(HttpHeaderNames.CONNECTION, "upgrade");
        } else {
            headers.remove(HttpHeaderNames.UPGRADE);
        }
    }

    private static List<String> listed(HttpHeaders headers) {
        List<String> names = new ArrayList<>();
        for (String value : headers.getAll(HttpHeaderNames.CONNECTION)) {
            for (String token : value.split(",")) {
                String t = token.strip();
                if (!t.isEmpty()) {
                    names.add(t);
                }
            }
        }
        return names;
    }

    private static boolean isProtected(String name) {
        for (AsciiString p : PROTECTED) {
            if (p.contentEqualsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }
}
