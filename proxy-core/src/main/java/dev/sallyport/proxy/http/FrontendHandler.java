package dev.sallyport.proxy.http;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.reload.Snapshot;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.UpstreamConnector;
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
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.util.ArrayDeque;
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
    final RequestRelay requests = new RequestRelay(this);
    ChannelHandlerContext ctx;
    Exchange current;
    boolean closing;

    public FrontendHandler(ProxyContext context, UpstreamConnector connector, TunnelTarget tunnel) {
        this.context = context;
        this.connector = connector;
        this.tunnel = tunnel;
    }

    UpstreamConnector connector() { return connector; }

    /** True while an exchange is open: its own timeouts (response headers, upstream idle) apply, not client idle. */
    public boolean busy() {
        return current != null;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext handlerContext) {
        this.ctx = handlerContext;
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        if (closing) {
            ReferenceCountUtil.release(msg);
        } else if (current != null && !current.requestDone && msg instanceof HttpContent content) {
            requests.body(current, content);
        } else if (current != null && !current.requestDone && msg instanceof Violation v) {
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
        Snapshot snapshot = context.snapshot();   // decision, dial check, injection and scrubbing all from this one
        GateResult result = RequestGate.evaluate(request, tunnel, audit.client(), snapshot.engine());
        switch (result) {
            case GateResult.Refuse r -> {
                if (r.decision() != null) {
                    audit.decision(r.decision());
                }
                if (r.target() != null) {
                    audit.target(r.target().host(), r.target().port());
                }
                refuse(r.status(), r.reason(), audit, null);
            }
            case GateResult.Forward f -> forward(request, f, audit, snapshot);
        }
    }

    private void forward(HttpRequest request, GateResult.Forward f, AuditRecord audit, Snapshot snapshot) {
        audit.target(f.target().host(), f.target().port()).decision(f.decision())
                .request(request.method().name(), pathOnly(f.originForm()));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, request.method(), f.originForm());
        head.headers().set(request.headers());
        HopHeaders.strip(head.headers(), f.websocket());
        BodyFraming.copy(request, head.headers());
        SecretsStep secrets = SecretsStep.open(snapshot.secrets(), f.target().host(), f.tls());
        InjectionResult.Refused refused = secrets == null ? null : secrets.inject(head, audit, context, ctx.alloc());
        if (refused != null) {
            SecretsStep.refuse(this, request, refused, audit);
            return;
        }
        Destination dest = new Destination(f.target().host(), f.target().port(), f.tls(), true);
        // The request's decision is recorded once the dial check has run (RequestRelay.upstreamReady): an
        // address denied by network.deny must be counted as a deny, not as the rule's allow.
        Exchange exchange = new Exchange(audit, dest, head, f.websocket(), HttpUtil.isKeepAlive(request));
        exchange.secrets = secrets;
        current = exchange;
        context.exchangeStarted();
        Future<UpstreamLease> lease = connector.acquire(dest, snapshot.engine(), ctx.channel().eventLoop(),
                audit.client());
        lease.addListener(done -> requests.upstreamReady(exchange, lease));
    }

    void refuseDuringExchange(Exchange exchange, Violation v) {
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

    void upstreamFailed(Exchange exchange, int status, String reason, String message) {
        requests.upstreamFailed(exchange, status, reason, message);
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
    public void channelWritabilityChanged(ChannelHandlerContext c) {
        Exchange exchange = current;
        if (exchange != null && c.channel().isWritable()) {
            responses.clientWritable(exchange);
        }
        c.fireChannelWritabilityChanged();
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

    /** The path of a request target without scheme, authority or query (what the audit record may hold). */
    static String pathOnly(String uri) {
        String path = uri;
        int scheme = path.indexOf("://");
        if (scheme > 0 && scheme < 8) {
            int slash = path.indexOf('/', scheme + 3);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        int q = path.indexOf('?');
        return q < 0 ? path : path.substring(0, q);
    }
}
