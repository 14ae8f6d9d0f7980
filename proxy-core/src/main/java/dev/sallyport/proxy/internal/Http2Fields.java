package dev.sallyport.proxy.internal;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What both HTTP/2 legs (the client's, {@code http2}, and the origin's, {@code upstream}) agree on about header
 * fields: which ones are connection-specific (RFC 9113 section 8.2.2: refused from a peer, never sent), and how
 * HTTP/1.1 fields become HTTP/2 ones.
 */
public final class Http2Fields {

    /** Connection-specific fields; {@code te} is one too, unless its value is {@code trailers}. */
    public static final Set<String> CONNECTION_SPECIFIC = Set.of("connection", "keep-alive", "proxy-connection",
            "transfer-encoding", "upgrade");

    private Http2Fields() {}

    /** HTTP/1.1 fields (a response head, or trailers) as HTTP/2 ones: names lower-cased, the connection-specific
     * ones, {@code te} and {@code host} left out. */
    public static Http2Headers fromHttp1(HttpHeaders fields) {
        Http2Headers h2 = new DefaultHttp2Headers();
        for (Map.Entry<String, String> e : fields) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            if (!CONNECTION_SPECIFIC.contains(name) && !name.equals("te") && !name.equals("host")) {
                h2.add(AsciiString.of(name), e.getValue());
            }
        }
        return h2;
    }
}
