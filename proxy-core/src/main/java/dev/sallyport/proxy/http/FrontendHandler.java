package dev.sallyport.proxy.http;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import dev.sallyport.proxy.upstream.UpstreamFailure;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client end of the HTTP phase, for absolute-form requests ({@code tunnel} null) or the requests inside an
 * intercepted tunnel. One exchange at a time: each request is decided by {@link RequestGate}, refused (status,
 * reason, close) or forwarded with its body streamed under back-pressure; {@link ResponseRelay} carries the
 * response back. Pipelined requests wait in a queue bounded by one read.
 */
public final class FrontendHandler extends ChannelInboundHandlerAdapter {

    static final Logger LOGGER = LoggerFactory.getLogger(FrontendHandler.class);

    final ProxyContext context;
    private final UpstreamConnector connector;
    private final TunnelTarget tunnel;
    private final ArrayDeque<Object> queued = new ArrayDeque<>();
    final ResponseRelay responses = new ResponseRelay(this);
    ChannelHandlerContext ctx;
    Exchange current;
    private boolean closing;

    public FrontendHandler(ProxyContext context, UpstreamConnector connector, TunnelTarget tunnel) {
        this.context = context;
        this.connector = connector;
        this.tunnel = tunnel;
    }

    UpstreamConnector connector() { return connector; }

    @Override
    public void handlerAdded(ChannelHandlerContext handlerContext) {
        this.ctx = handlerContext;
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        if (closing) {
            ReferenceCountUtil.release(msg);
        } else if (current != null && !current.requestDone && msg instanceof HttpContent content) {
            requestBody(current, content);
        } else if (current != null && msg instanceof Violation v) {
            refuseDuringExchange(current, v);
        } else if (current != null) {
            queued.add(msg);
        } else {
            idle(msg);
        }
    }

    private void idle(Object msg) {
        switch (msg) {
            case Violation v -> refuse(v.status(), v.reason(), newAudit(), null);
            case HttpRequest request -> start(request);
            default -> ReferenceCountUtil.release(msg);
        }
    }

    private AuditRecord newAudit() {
        AuditRecord audit = new AuditRecord(context.nextId(), ctx.channel().remoteAddress());
        if (tunnel != null) {
            audit.target(tunnel.host(), tunnel.port()).tls("intercepted").sni(tunnel.sni());
        } else {
            audit.tls("none");
        }
        return audit;
    }

    private void start(HttpRequest request) {
        AuditRecord audit = newAudit();
        audit.request(request.method().name(), pathOnly(request.uri()));
        if (context.draining()) {
            refuse(503, "shutting_down", audit, null);
            return;
        }
        if (!context.auditAccepting()) {
            refuse(503, "audit_unavailable", audit, null);
            return;
        }
        GateResult result = RequestGate.evaluate(request, tunnel, audit.client(), context.engine());
        switch (result) {
            case GateResult.Refuse r -> {
                if (r.decision() != null) {
                    audit.decision(r.decision());
                }
                refuse(r.status(), r.reason(), audit, null);
            }
            case GateResult.Forward f -> forward(request, f, audit);
        }
    }

    private void forward(HttpRequest request, GateResult.Forward f, AuditRecord audit) {
        audit.target(f.target().host(), f.target().port()).decision(f.decision())
                .request(request.method().name(), pathOnly(f.originForm()));
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, request.method(), f.originForm());
        head.headers().set(request.headers());
        HopHeaders.strip(head.headers(), f.websocket());
        Destination dest = new Destination(f.target().host(), f.target().port(), f.tls(), true);
        Exchange exchange = new Exchange(audit, dest, head, f.websocket(), HttpUtil.isKeepAlive(request));
        current = exchange;
        context.exchangeStarted();
        Future<UpstreamLease> lease = connector.acquire(dest, ctx.channel().eventLoop(), audit.client());
        lease.addListener(done -> upstreamReady(exchange, lease));
    }

    private void upstreamReady(Exchange exchange, Future<UpstreamLease> future) {
        if (!future.isSuccess()) {
            UpstreamFailure failure = (UpstreamFailure) future.cause();
            exchange.audit.ip(failure.ip());
            if (failure.status() == 403) {
                exchange.audit.denied(failure.reason());
            }
            upstreamFailed(exchange, failure.status(), failure.reason(), failure.getMessage());
            return;
        }
        UpstreamLease lease = future.getNow();
        if (exchange != current || exchange.finished) {
            connector.release(lease, false);
            return;
        }
        exchange.lease = lease;
        exchange.audit.ip(lease.ip());
        lease.channel().pipeline().addLast(BackendHandler.NAME, new BackendHandler(this, exchange));
        lease.channel().write(exchange.upstreamHead);
        while (!exchange.pendingBody.isEmpty()) {
            lease.channel().write(exchange.pendingBody.poll());
        }
        lease.channel().flush();
        long timeout = context.policy().proxy().timeouts().responseHeaders().toNanos();
        exchange.headerTimer = ctx.executor().schedule(() -> upstreamFailed(exchange, 504, "upstream_timeout",
                "client " + exchange.audit.client() + " => " + exchange.destination.text()
                        + ": no response headers within " + timeout / 1_000_000 + " ms"), timeout, TimeUnit.NANOSECONDS);
        lease.channel().read();
        if (!exchange.requestDone) {
            ctx.read();
        }
    }

    private void requestBody(Exchange exchange, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        exchange.bytesUp += content.content().readableBytes();
        exchange.requestDone = last;
        if (exchange.lease == null) {
            exchange.pendingBody.add(content);
            return;
        }
        exchange.lease.channel().writeAndFlush(content).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                upstreamFailed(exchange, 502, "upstream_write_failed", "sending the request body failed");
            } else if (!last && exchange == current) {
                ctx.read();
            }
        });
    }

    private void refuseDuringExchange(Exchange exchange, Violation v) {
        exchange.audit.reason(v.reason());
        if (exchange.lease != null) {
            exchange.lease.channel().pipeline().remove(BackendHandler.NAME);
            connector.release(exchange.lease, false);
        }
        if (exchange.responseStarted) {
            finish(exchange, v.status());
            ctx.close();
        } else {
            exchange.status = v.status();
            finish(exchange, v.status());
            writeError(v.status(), v.reason(), null);
        }
    }

    /** Answers a request that will not be forwarded, records the decision, and closes the connection. */
    void refuse(int status, String reason, AuditRecord audit, String detail) {
        if (audit.fields().decision() == null) {
            audit.denied(reason);
        } else {
            audit.reason(reason);
        }
        audit.status(status);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
        writeError(status, reason, detail);
    }

    void writeError(int status, String reason, String detail) {
        closing = true;
        queued.forEach(ReferenceCountUtil::release);
        queued.clear();
        LingeringClose.respondAndClose(ctx.channel(), Responses.error(ctx.alloc(), status, reason, detail));
    }

    /** The upstream side failed: a 502/504 if nothing was sent yet, otherwise the client connection closes. */
    void upstreamFailed(Exchange exchange, int status, String reason, String message) {
        if (exchange.finished || exchange.upgraded) {
            return;
        }
        exchange.cancelHeaderTimer();
        if (exchange.lease != null) {
            if (exchange.lease.channel().pipeline().get(BackendHandler.NAME) != null) {
                exchange.lease.channel().pipeline().remove(BackendHandler.NAME);
            }
            connector.release(exchange.lease, false);
        }
        exchange.audit.reason(reason);
        if (status != 403) {
            LOGGER.warn("{}", message);
        }
        boolean started = exchange.responseStarted;
        finish(exchange, started ? exchange.status : status);
        if (started) {
            closing = true;
            ctx.close();
        } else {
            writeError(status, reason, message);
        }
    }

    /** Records the end of an exchange once; returns the upstream connection if it can be reused. */
    void finish(Exchange exchange, int status) {
        if (exchange.finished) {
            return;
        }
        exchange.finished = true;
        exchange.cancelHeaderTimer();
        exchange.releasePending();
        exchange.audit.status(status).bytes(exchange.bytesUp, exchange.bytesDown).duration(exchange.elapsedMs());
        context.emit(new ProxyEvent.ExchangeCompleted(context.clock().instant(), exchange.audit.fields()));
        context.exchangeFinished();
        if (current == exchange) {
            current = null;
        }
    }

    /** After a complete response: next pipelined request, next read, or close. */
    void nextRequest(boolean keepAlive) {
        if (!keepAlive || closing || context.draining()) {
            closing = true;
            queued.forEach(ReferenceCountUtil::release);
            queued.clear();
            ctx.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        while (!queued.isEmpty() && !closing
                && (current == null || !current.requestDone && queued.peek() instanceof HttpContent)) {
            channelRead(ctx, queued.poll());
        }
        if (current == null || !current.requestDone) {
            ctx.read();
        }
    }

    void responseHead(Exchange exchange, io.netty.handler.codec.http.HttpResponse response) {
        responses.head(exchange, response);
    }

    void responseContent(Exchange exchange, HttpContent content) {
        responses.content(exchange, content);
    }

    void upgradedBytes(Exchange exchange, ByteBuf raw) {
        responses.upgradedBytes(exchange, raw);
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        closing = true;
        queued.forEach(ReferenceCountUtil::release);
        queued.clear();
        Exchange exchange = current;
        if (exchange != null && !exchange.upgraded) {
            exchange.audit.reason("client_closed");
            if (exchange.lease != null) {
                connector.release(exchange.lease, false);
            }
            finish(exchange, exchange.status == 0 ? 499 : exchange.status);
        }
        c.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        LOGGER.debug("client connection failed client={}", c.channel().remoteAddress(), cause);
        c.close();
    }

    static String pathOnly(String uri) {
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }
}
