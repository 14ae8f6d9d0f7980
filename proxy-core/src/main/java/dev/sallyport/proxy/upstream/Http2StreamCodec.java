package dev.sallyport.proxy.upstream;

import dev.sallyport.proxy.internal.Http2Fields;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The HTTP objects of one exchange as the frames of one HTTP/2 stream toward the upstream, so that the core writes
 * and reads an HTTP/2 upstream exactly as an HTTP/1.1 one: the request head becomes a HEADERS frame
 * ({@code :authority} from {@code Host}, the connection-specific fields left out, {@code te} only as
 * {@code trailers}), body parts DATA frames, trailers a last HEADERS frame; the response's first final HEADERS
 * frame becomes an {@link HttpResponse} (framed as chunked for HTTP/1.1 readers when it states no length), DATA
 * frames {@link HttpContent}, and its trailers the {@link LastHttpContent}'s trailing headers. A response head the
 * HTTP/1.1 side could not carry (no or a bad {@code :status}, a field name or value HTTP/1.1 refuses) becomes a
 * failed response, which the core answers as {@code upstream_bad_response}.
 */
final class Http2StreamCodec extends ChannelDuplexHandler {

    /** Fields of HTTP/1.1 that HTTP/2 forbids (RFC 9113, section 8.2.2); {@code host} becomes {@code :authority}. */
    private HttpMethod inFlight;
    private boolean finalHead;
    /** The request's HEADERS frame ended the stream (it declared no body): its empty last part writes nothing. */
    private boolean requestEnded;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof HttpObject http)) {
            ctx.write(msg, promise);
            return;
        }
        List<Object> out = new ArrayList<>(2);
        try {
            encode(http, out);
        } finally {
            ReferenceCountUtil.release(msg);
        }
        if (out.isEmpty()) {
            promise.setSuccess();
            return;
        }
        for (int i = 0; i < out.size() - 1; i++) {
            ctx.write(out.get(i));
        }
        ctx.write(out.getLast(), promise);
    }

    private void encode(HttpObject msg, List<Object> out) {
        if (requestEnded) {
            if (!(msg instanceof LastHttpContent last && !last.content().isReadable()
                    && last.trailingHeaders().isEmpty())) {
                throw new IllegalStateException("a body part after a request that declared none");
            }
            return;
        }
        boolean headEnds = false;
        if (msg instanceof HttpRequest request) {
            inFlight = request.method();
            Http2Headers h2 = new DefaultHttp2Headers();
            h2.method(request.method().asciiName()).scheme("https").path(request.uri());
            String host = request.headers().get(HttpHeaderNames.HOST);
            if (host != null) {
                h2.authority(host);
            }
            for (Map.Entry<String, String> e : request.headers()) {
                String name = e.getKey().toLowerCase(Locale.ROOT);
                if (Http2Fields.CONNECTION_SPECIFIC.contains(name) || name.equals("host")) {
                    continue;
                }
                if (name.equals("te")) {
                    if (e.getValue().toLowerCase(Locale.ROOT).contains("trailers")) {
                        h2.set(HttpHeaderNames.TE, HttpHeaderValues.TRAILERS);
                    }
                    continue;
                }
                h2.add(AsciiString.of(name), e.getValue());
            }
            headEnds = declaresNoBody(request) || (msg instanceof LastHttpContent last
                    && !last.content().isReadable() && last.trailingHeaders().isEmpty());
            out.add(new DefaultHttp2HeadersFrame(h2, headEnds));
            requestEnded = headEnds && !(msg instanceof LastHttpContent);
        }
        if (msg instanceof HttpContent content && !headEnds) {
            if (content instanceof LastHttpContent last && !last.trailingHeaders().isEmpty()) {
                if (content.content().isReadable()) {
                    out.add(new DefaultHttp2DataFrame(content.content().retain(), false));
                }
                out.add(new DefaultHttp2HeadersFrame(Http2Fields.fromHttp1(last.trailingHeaders()), true));
            } else {
                out.add(new DefaultHttp2DataFrame(content.content().retain(), content instanceof LastHttpContent));
            }
        }
    }

    /** True for a head the core framed without a body (neither a length above zero nor chunked). */
    private static boolean declaresNoBody(HttpRequest request) {
        return !request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)
                && request.headers().getInt(HttpHeaderNames.CONTENT_LENGTH, 0) == 0;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Http2StreamFrame frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        List<Object> out = new ArrayList<>(2);
        try {
            decode(frame, out);
        } finally {
            ReferenceCountUtil.release(msg);
        }
        out.forEach(ctx::fireChannelRead);
    }

    /** The server reset the stream: its code is kept for the exchange's reason; the stream channel closes next. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof Http2ResetFrame reset) {
            ctx.channel().attr(UpstreamInitializer.STREAM_RESET).set(reset.errorCode());
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void decode(Http2StreamFrame frame, List<Object> out) {
        switch (frame) {
            case Http2HeadersFrame headers when !finalHead -> head(headers, out);
            case Http2HeadersFrame trailers -> {
                LastHttpContent last = new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER,
                        DefaultHttpHeadersFactory.trailersFactory());
                try {
                    copy(trailers.headers(), last.trailingHeaders());
                } catch (IllegalArgumentException e) {
                    last.release();
                    out.add(failed("trailers the HTTP/1.1 side cannot carry: " + e.getMessage()));
                    return;
                }
                out.add(last);
            }
            case Http2DataFrame data when finalHead -> out.add(data.isEndStream()
                    ? new DefaultLastHttpContent(data.content().retain())
                    : new DefaultHttpContent(data.content().retain()));
            case Http2DataFrame data -> out.add(failed("DATA before the response's HEADERS"));
            default -> { }      // resets and window updates are the stream channel's business
        }
    }

    private void head(Http2HeadersFrame frame, List<Object> out) {
        Http2Headers h2 = frame.headers();
        int code;
        try {
            code = Integer.parseInt(String.valueOf(h2.status()));
        } catch (NumberFormatException e) {
            out.add(failed(":status is " + h2.status() + " (expected: a three-digit code)"));
            return;
        }
        if (code < 100 || code > 999 || code == 101) {
            out.add(failed(":status is " + code + " (expected: 1xx other than 101, or 200-999)"));
            return;
        }
        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(code),
                DefaultHttpHeadersFactory.headersFactory());
        try {
            copy(h2, response.headers());
        } catch (IllegalArgumentException e) {
            out.add(failed("a field the HTTP/1.1 side cannot carry: " + e.getMessage()));
            return;
        }
        if (code < 200) {
            if (frame.isEndStream()) {
                out.add(failed("an interim response ended the stream"));
                return;
            }
            out.add(response);
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);    // as HTTP/1.1's decoder reads an interim response
            return;
        }
        finalHead = true;
        boolean bodiless = code == 204 || code == 304 || HttpMethod.HEAD.equals(inFlight);
        if (!bodiless && !response.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            if (frame.isEndStream()) {
                response.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
            } else {
                response.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        out.add(response);
        if (frame.isEndStream()) {
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        }
    }

    /** The regular fields of {@code h2} (pseudo-headers are HTTP/2's own) into HTTP/1.1 fields, which validate. */
    private static void copy(Http2Headers h2, HttpHeaders into) {
        for (Map.Entry<CharSequence, CharSequence> e : h2) {
            CharSequence name = e.getKey();
            if (name.length() > 0 && name.charAt(0) == ':') {
                continue;
            }
            into.add(name, e.getValue());
        }
    }

    private static HttpResponse failed(String why) {
        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY);
        response.setDecoderResult(DecoderResult.failure(new IllegalStateException(why)));
        return response;
    }
}
