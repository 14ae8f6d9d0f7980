package dev.sallyport.proxy.http2;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.Downstream;
import dev.sallyport.proxy.exchange.Exchange;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.Http2Fields;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/2 stream as one exchange of the core: reads the stream's request head ({@link Http2Requests}) and body
 * (DATA frames, under the stream's flow control: the stream channel reads only when the core asks), and is the
 * core's {@link Downstream} for it, turning the response's HTTP objects into HEADERS and DATA frames (trailers as
 * a last HEADERS frame). A body longer or shorter than its {@code content-length} is refused before a byte beyond it
 * goes upstream. A refusal answers on this stream alone; {@link #abort()} resets it. Other streams are unaffected.
 */
final class Http2StreamFrontend extends ChannelInboundHandlerAdapter implements Downstream {

    /** How far the client's request on this stream has come. */
    private enum Request { AWAITING_HEAD, BODY, ENDED }

    private final ExchangeCore core;
    private final TunnelTarget tunnel;
    private final Http2Refusals refusals;
    private ChannelHandlerContext ctx;
    private Exchange current;
    private Request request = Request.AWAITING_HEAD;
    private long declaredLength = -1;
    private boolean grpc;
    /** A final response head not written yet (see {@link #send}), and the promise its write completes. */
    private Http2Headers pendingHead;
    private ChannelPromise pendingWrite;
    private long received;
    private final long maxBodyBytes;

    /** @param maxBodyBytes the policy's {@code max_body_bytes} when the connection opened (0: no bound) */
    Http2StreamFrontend(ExchangeCore core, TunnelTarget tunnel, Http2Refusals refusals, long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
        this.core = core;
        this.tunnel = tunnel;
        this.refusals = refusals;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext handlerContext) {
        this.ctx = handlerContext;
    }

    @Override
    public void channelActive(ChannelHandlerContext c) {
        c.read();       // the stream's request head
        c.fireChannelActive();
    }

    private ExchangeRequest.Origin origin() {
        Channel connection = ctx.channel().parent();
        return new ExchangeRequest.Origin(AuditRecord.clientText(connection.remoteAddress()), "intercepted",
                tunnel.sni(), "h2", tunnel.arrival(), ClientIdentity.of(connection));
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        try {
            switch (msg) {
                case Http2HeadersFrame headers when request == Request.AWAITING_HEAD -> head(headers);
                case Http2HeadersFrame trailers when request == Request.BODY -> trailers(trailers);
                case Http2DataFrame data when request == Request.BODY -> data(data);
                default -> { }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void head(Http2HeadersFrame frame) {
        refusals.taken(((Http2StreamChannel) ctx.channel()).stream().id());
        boolean end = frame.isEndStream();
        request = end ? Request.ENDED : Request.BODY;
        grpc = Exchange.isGrpc(frame.headers().get("content-type"));
        switch (Http2Requests.read(frame.headers(), end, tunnel, origin())) {
            case Http2Requests.Refuse r -> {
                CharSequence method = frame.headers().method();
                CharSequence path = frame.headers().path();
                core.refuseUnread(origin(), method == null ? null : method.toString(),
                        path == null ? null : path.toString(), r.target(), r.status(), r.reason(), this);
            }
            case Http2Requests.Read read -> {
                declaredLength = read.contentLength();
                if (maxBodyBytes > 0 && declaredLength > maxBodyBytes) {
                    core.refuseUnread(origin(), read.request().method(), read.request().originForm(),
                            read.request().target(), 413, "body_too_large", this);
                    return;
                }
                Exchange started = core.start(read.request(), this);
                current = started != null && started.inProgress() ? started : null;
                if (current != null && end) {
                    current.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
                }
            }
        }
    }

    private void data(Http2DataFrame frame) {
        boolean end = frame.isEndStream();
        received += frame.content().readableBytes();
        if (end) {
            request = Request.ENDED;
        }
        if (declaredLength >= 0 && (received > declaredLength || (end && received != declaredLength))) {
            request = Request.ENDED;
            violation(400, "content_length_mismatch");
            return;
        }
        if (maxBodyBytes > 0 && received > maxBodyBytes) {
            request = Request.ENDED;
            violation(413, "body_too_large");
            return;
        }
        if (current != null && current.awaitingRequestBody()) {
            current.requestBody(end ? new DefaultLastHttpContent(frame.content().retain())
                    : new DefaultHttpContent(frame.content().retain()));
        }
    }

    private void trailers(Http2HeadersFrame frame) {
        request = Request.ENDED;
        if (!frame.isEndStream() || (declaredLength >= 0 && received != declaredLength)) {
            violation(400, frame.isEndStream() ? "content_length_mismatch" : "malformed_trailers");
            return;
        }
        LastHttpContent last = new DefaultLastHttpContent();
        for (Map.Entry<CharSequence, CharSequence> e : frame.headers()) {
            String name = e.getKey().toString();
            if (name.startsWith(":") || Http2Fields.CONNECTION_SPECIFIC.contains(name)) {
                violation(400, "malformed_trailers");
                return;
            }
            try {
                last.trailingHeaders().add(name, e.getValue());
            } catch (IllegalArgumentException invalid) {
                violation(400, "malformed_trailers");
                return;
            }
        }
        if (current != null && current.awaitingRequestBody()) {
            current.requestBody(last);
        } else {
            last.release();
        }
    }

    /** The request broke its own framing: the exchange (if any) is refused, else the stream is reset. */
    private void violation(int status, String reason) {
        Exchange exchange = current;
        if (exchange != null && exchange.awaitingRequestBody()) {
            exchange.requestViolation(status, reason);
        } else if (exchange == null) {
            reset(Http2Error.PROTOCOL_ERROR);
        }
    }

    @Override
    public Channel channel() {
        return ctx.channel();
    }

    /**
     * Writes a part of the response. A final head waits for what follows it in the same read (or a flush): when that
     * is the end of an empty body, the head goes as one HEADERS frame that ends the stream, the shape of a gRPC
     * trailers-only response (a status in headers followed by an empty DATA frame would be a call without trailers).
     */
    @Override
    public ChannelFuture send(HttpObject part, boolean flush) {
        ChannelFuture last = null;
        boolean ended = false;
        if (part instanceof HttpResponse head) {
            Http2Headers h2 = Http2Fields.fromHttp1(head.headers());
            h2.status(head.status().codeAsText());
            boolean interim = head.status().code() < 200;
            ended = !interim && part instanceof LastHttpContent body && !body.content().isReadable()
                    && body.trailingHeaders().isEmpty();
            if (interim || ended || part instanceof LastHttpContent) {
                last = ctx.write(new DefaultHttp2HeadersFrame(h2, ended));
            } else {
                pendingHead = h2;
                pendingWrite = ctx.newPromise();
                last = pendingWrite;
            }
        }
        if (part instanceof HttpContent content && !ended) {
            boolean end = content instanceof LastHttpContent;
            HttpHeaders trailers = end ? ((LastHttpContent) content).trailingHeaders() : null;
            boolean empty = !content.content().isReadable();
            if (pendingHead != null && !(part instanceof HttpResponse)) {
                if (end && empty && trailers.isEmpty()) {
                    last = writePendingHead(true);
                    ReferenceCountUtil.release(part);
                    if (flush) {
                        ctx.flush();
                    }
                    return last;
                }
                writePendingHead(false);
            }
            if (trailers != null && !trailers.isEmpty()) {
                if (!empty) {
                    ctx.write(new DefaultHttp2DataFrame(content.content().retain(), false));
                }
                last = ctx.write(new DefaultHttp2HeadersFrame(Http2Fields.fromHttp1(trailers), true));
            } else if (!(part instanceof HttpResponse) || !empty) {
                last = ctx.write(new DefaultHttp2DataFrame(content.content().retain(), end));
            }
        }
        ReferenceCountUtil.release(part);
        if (flush) {
            flush();
        }
        return last != null ? last : ctx.newSucceededFuture();
    }

    /** Writes the head that waited; {@code end}: it ends the stream (the body is empty). */
    private ChannelFuture writePendingHead(boolean end) {
        Http2Headers head = pendingHead;
        ChannelPromise promise = pendingWrite;
        pendingHead = null;
        pendingWrite = null;
        return ctx.write(new DefaultHttp2HeadersFrame(head, end), promise);
    }

    @Override
    public void flush() {
        if (pendingHead != null) {
            writePendingHead(false);
        }
        ctx.flush();
    }

    @Override
    public void readRequestBody() {
        if (request == Request.BODY) {
            ctx.read();
        }
    }

    @Override
    public void refuse(int status, String reason, String detail, boolean keepOpen) {
        current = null;
        if (grpc) {
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(GrpcRefusal.headers(status, reason, detail), true))
                    .addListener((ChannelFutureListener) f -> finish());
            return;
        }
        send(Responses.error(ctx.alloc(), status, reason, detail), true)
                .addListener((ChannelFutureListener) f -> finish());
    }

    @Override
    public void abort() {
        current = null;
        reset(Http2Error.CANCEL);
    }

    @Override
    public void ended(boolean keepOpen) {
        current = null;
        finish();
    }

    /** The response is out: a request still sending is told to stop; a finished stream closes by itself. */
    private void finish() {
        if (request != Request.ENDED) {
            reset(Http2Error.NO_ERROR);
        }
    }

    private void reset(Http2Error error) {
        if (pendingWrite != null) {
            pendingWrite.tryFailure(new IllegalStateException("the stream was reset before its head went out"));
            pendingHead = null;
            pendingWrite = null;
        }
        if (ctx.channel().isActive()) {
            ctx.writeAndFlush(new DefaultHttp2ResetFrame(error)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public Channel becomeRelay(List<ChannelHandler> inbound) {
        throw new IllegalStateException("an HTTP/2 stream does not upgrade (WebSocket requests are refused before)");
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext c) {
        Exchange exchange = current;
        if (exchange != null && c.channel().isWritable()) {
            exchange.downstreamWritable();
        }
        c.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        Exchange exchange = current;
        current = null;
        if (exchange != null) {
            exchange.downstreamClosed();
        }
        c.fireChannelInactive();
    }

    /**
     * Netty's codec found the stream malformed (a header block its validation refused, DATA beyond the
     * {@code content-length}) and reset it: the exchange, or a record of the refused request, says why.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        if (cause instanceof Http2Exception error) {
            String reason = reason(error);
            Exchange exchange = current;
            if (exchange != null && exchange.awaitingRequestBody()) {
                exchange.requestViolation(400, reason);
            } else if (exchange == null && request == Request.AWAITING_HEAD) {
                request = Request.ENDED;
                refusals.taken(((Http2StreamChannel) c.channel()).stream().id());
                core.refuseUnread(origin(), null, null, new Authority(tunnel.host(), tunnel.port()), 400, reason,
                        this);
            }
        }
        c.close();
    }

    private static String reason(Http2Exception error) {
        String message = String.valueOf(error.getMessage()).toLowerCase(Locale.ROOT);
        return message.contains("content-length") ? "content_length_mismatch" : "h2_protocol_error";
    }
}
