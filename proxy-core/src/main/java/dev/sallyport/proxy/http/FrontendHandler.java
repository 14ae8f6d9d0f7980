package dev.sallyport.proxy.http;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.BodyFraming;
import dev.sallyport.proxy.exchange.Downstream;
import dev.sallyport.proxy.exchange.Exchange;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ClientPhases;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.1 front end of the exchange core, for absolute-form requests ({@code tunnel} null) or the requests
 * inside an intercepted tunnel: reads each request head into an {@link ExchangeRequest} ({@link Http1Requests}),
 * hands it and its body to the {@link ExchangeCore}, and is the core's {@link Downstream} on this connection:
 * HTTP/1.1 responses, {@code Connection: close} when the connection ends after one, refusals with a status and
 * reason, keep-alive and pipelining (one exchange at a time; what arrives meanwhile waits, bounded by one read).
 */
public final class FrontendHandler extends ChannelInboundHandlerAdapter implements Downstream {

    private static final org.slf4j.Logger LOGGER = org.slf4j.LoggerFactory.getLogger(FrontendHandler.class);

    /** Whether this connection takes another request. */
    private enum Connection { OPEN, CLOSING }

    private final ExchangeCore core;
    private final TunnelTarget tunnel;
    private final ClientPhases phases;
    private final ArrayDeque<Object> queued = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private Exchange current;
    private HttpMethod method;
    private boolean clientKeepAlive;
    private boolean closeAfterResponse;
    private Connection connection = Connection.OPEN;

    public FrontendHandler(ExchangeCore core, TunnelTarget tunnel, ClientPhases phases) {
        this.core = core;
        this.tunnel = tunnel;
        this.phases = phases;
    }

    /** True while an exchange is open: its own timeouts (response headers, upstream idle) apply, not client idle. */
    public boolean busy() {
        return current != null && current.inProgress();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext handlerContext) {
        this.ctx = handlerContext;
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        if (connection == Connection.CLOSING) {
            ReferenceCountUtil.release(msg);
        } else if (current != null && current.awaitingRequestBody() && msg instanceof HttpContent content) {
            current.requestBody(content);
        } else if (current != null && current.awaitingRequestBody() && msg instanceof Violation v) {
            current.requestViolation(v.status(), v.reason());
        } else if (busy()) {
            queued.add(msg);
        } else {
            idle(msg);
        }
    }

    private void idle(Object msg) {
        switch (msg) {
            case Violation v -> core.refuseUnread(origin(), null, null, null, v.status(), v.reason(), this);
            case HttpRequest request -> start(request);
            default -> ReferenceCountUtil.release(msg);
        }
    }

    private ExchangeRequest.Origin origin() {
        String client = AuditRecord.clientText(ctx.channel().remoteAddress());
        ClientIdentity identity = ClientIdentity.of(ctx.channel());
        return tunnel == null ? new ExchangeRequest.Origin(client, "none", null, "http/1.1", TunnelTarget.EXPLICIT,
                identity)
                : tunnel.carries() == TunnelTarget.Carries.PLAIN_HTTP
                ? new ExchangeRequest.Origin(client, "none", null, "http/1.1", tunnel.arrival(), identity)
                : new ExchangeRequest.Origin(client, "intercepted", tunnel.sni(), "http/1.1", tunnel.arrival(),
                identity);
    }

    private void start(HttpRequest request) {
        method = request.method();
        clientKeepAlive = HttpUtil.isKeepAlive(request);
        closeAfterResponse = false;
        switch (Http1Requests.read(request, tunnel, origin())) {
            case Http1Requests.Refuse r -> core.refuseUnread(origin(), request.method().name(), request.uri(),
                    r.target() != null ? r.target() : tunnel == null ? null
                            : new Authority(tunnel.host(), tunnel.port()),
                    r.status(), r.reason(), this);
            case Http1Requests.Read read -> {
                Exchange started = core.start(read.request(), this);
                current = started != null && started.inProgress() ? started : null;
            }
        }
    }

    @Override
    public Channel channel() {
        return ctx.channel();
    }

    @Override
    public ChannelFuture send(HttpObject part, boolean flush) {
        if (part instanceof HttpResponse head && head.status().code() >= 200 && head.status().code() != 101) {
            closeAfterResponse = !clientKeepAlive || !BodyFraming.delimited(head, method);
            if (closeAfterResponse) {
                head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
        }
        return flush ? ctx.writeAndFlush(part) : ctx.write(part);
    }

    @Override
    public void flush() {
        ctx.flush();
    }

    @Override
    public void readRequestBody() {
        ctx.read();
    }

    @Override
    public void refuse(int status, String reason, String detail, boolean keepOpen) {
        current = null;
        if (!keepOpen || !clientKeepAlive) {
            writeError(status, reason, detail);
            return;
        }
        FullHttpResponse response = Responses.error(ctx.alloc(), status, reason, detail);
        response.headers().remove(HttpHeaderNames.CONNECTION);
        ctx.writeAndFlush(response).addListener((ChannelFutureListener) done -> {
            if (done.isSuccess()) {
                ctx.executor().execute(() -> nextRequest(true));   // never inside the core's call
            } else {
                ctx.close();
            }
        });
    }

    private void writeError(int status, String reason, String detail) {
        closing();
        phases.answerAndClose(ctx.channel(), Responses.error(ctx.alloc(), status, reason, detail));
    }

    @Override
    public void abort() {
        closing();
        ctx.close();    // an exchange still open ends when the channel is inactive (downstreamClosed)
    }

    @Override
    public void ended(boolean keepOpen) {
        current = null;
        nextRequest(keepOpen && !closeAfterResponse);
    }

    @Override
    public Channel becomeRelay(List<ChannelHandler> inbound) {
        current = null;
        return phases.toRelay(ctx.pipeline(), inbound);
    }

    /** After a complete response: next pipelined request, next read, or close. */
    private void nextRequest(boolean keepAlive) {
        if (!keepAlive || connection == Connection.CLOSING || core.context().draining()) {
            closing();
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        while (!queued.isEmpty() && connection == Connection.OPEN
                && (current == null || (current.awaitingRequestBody() && queued.peek() instanceof HttpContent))) {
            channelRead(ctx, queued.poll());
        }
        if (current == null || current.awaitingRequestBody()) {
            ctx.read();
        }
    }

    private void closing() {
        connection = Connection.CLOSING;
        queued.forEach(ReferenceCountUtil::release);
        queued.clear();
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
        closing();
        Exchange exchange = current;
        current = null;
        if (exchange != null) {
            exchange.downstreamClosed();
        }
        c.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        LOGGER.debug("client connection failed client={}", c.channel().remoteAddress(), cause);
        c.close();
    }
}
