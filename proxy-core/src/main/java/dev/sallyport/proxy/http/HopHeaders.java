package dev.sallyport.proxy.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;

/** Removes hop-by-hop headers (RFC 9110 7.6.1) before a message crosses the proxy. */
final class HopHeaders {

    private HopHeaders() {}

    /** Strips hop-by-hop headers; keeps {@code Connection: upgrade} and {@code Upgrade} when upgrading. */
    static void strip(HttpHeaders headers, boolean keepUpgrade) {
        List<String> listed = new ArrayList<>();
        for (String value : headers.getAll(HttpHeaderNames.CONNECTION)) {
            for (String token : value.split(",")) {
                String t = token.strip();
                if (!t.isEmpty()) {
                    listed.add(t);
                }
            }
        }
        for (String name : listed) {
            if (!(keepUpgrade && name.equalsIgnoreCase("upgrade"))) {
                headers.remove(name);
            }
        }
        headers.remove(HttpHeaderNames.CONNECTION);
        headers.remove("Proxy-Connection");
        headers.remove(HttpHeaderNames.KEEP_ALIVE);
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
}
