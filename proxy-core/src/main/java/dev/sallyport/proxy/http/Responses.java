package dev.sallyport.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/** The short answers the proxy gives instead of a silent close: status, reason header, one text line. */
public final class Responses {

    public static final String REASON_HEADER = "X-Sallyport-Reason";

    private Responses() {}

    /** A response that also closes the connection; {@code detail} is one line naming the hop, or null. */
    public static FullHttpResponse error(ByteBufAllocator alloc, int status, String reason, String detail) {
        HttpResponseStatus code = HttpResponseStatus.valueOf(status);
        String text = "sallyport: " + code.code() + " " + code.reasonPhrase() + ": " + reason
                + (detail == null ? "" : "\n" + detail) + "\n";
        ByteBuf body = alloc.buffer().writeBytes(text.getBytes(StandardCharsets.UTF_8));
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, code, body);
        response.headers()
                .set(REASON_HEADER, reason)
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return response;
    }
}
