package dev.sallyport.proxy.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpUtil;

/**
 * The framing a forwarded message carries is the one the proxy parsed, set by the proxy: never a copy of headers
 * that something on the way (a hop-by-hop list, a rewrite) could have changed. Netty's encoder frames the body by
 * these headers, so a body parsed as 52 bytes goes out as exactly 52 bytes, or chunked when it came chunked.
 */
final class BodyFraming {

    private BodyFraming() {}

    /** Sets {@code out}'s Content-Length or Transfer-Encoding to how {@code parsed} was framed. */
    static void copy(HttpMessage parsed, HttpHeaders out) {
        boolean chunked = HttpUtil.isTransferEncodingChunked(parsed);
        long length = HttpUtil.getContentLength(parsed, -1L);
        out.remove(HttpHeaderNames.CONTENT_LENGTH);
        out.remove(HttpHeaderNames.TRANSFER_ENCODING);
        if (chunked) {
            out.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        } else if (length >= 0) {
            out.set(HttpHeaderNames.CONTENT_LENGTH, length);
        }
    }
}
