package dev.sallyport.proxy.exchange;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;

/**
 * How a message's end is known. A forwarded request carries the framing the proxy parsed, set by the core (never a
 * copied header: {@code ExchangeCore}); a response's end decides whether a connection can carry another exchange.
 */
public final class BodyFraming {

    private BodyFraming() {}

    /** True when the end of {@code response} (to a {@code method} request) can be told without a close. */
    public static boolean delimited(HttpResponse response, HttpMethod method) {
        int code = response.status().code();
        return HttpUtil.isContentLengthSet(response) || HttpUtil.isTransferEncodingChunked(response)
                || code == 204 || code == 304 || method.equals(HttpMethod.HEAD);
    }
}
