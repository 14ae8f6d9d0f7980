package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.limits.ClientKey;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.Dialer;
import dev.sallyport.proxy.upstream.UpstreamFailure;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request and its response through the core, on its client's event loop. Made by {@link ExchangeCore} once the
 * request was decided and its secrets injected; from then on it dials, checks the dialed address, admits the
 * decision to the audit log, writes the request (the body checked part by part, under back-pressure), and hands
 * the response to {@link ResponseFlow}. It ends exactly once, with one {@code ExchangeCompleted} record: the only
 * {@code request} record of the exchange with a {@code status} (the admitted decision before it has none).
 *
 * <p>Its state is a {@link State}: {@code Dialing} (body parts that came early wait), {@code Open} (request and
 * response streaming on a lease), {@code Upgraded} (a WebSocket relay owns both connections), {@code Abandoned}
 * (over before the dial resolved: its record waits for the dial's outcome), {@code Ended}. The request body's own
 * progress is a {@link RequestBody}.
 */
public final class Exchange {

    static final Logger LOGGER = LoggerFactory.getLogger(Exchange.class);

    /** Where the exchange is. */
    sealed interface State {
        /** Waiting for the upstream connection; body parts that arrive meanwhile wait here. */
        record Dialing(ArrayDeque<HttpContent> pending) implements State {}

        /** Request and response streaming on {@code lease}. */
        record Open(UpstreamLease lease) implements State {}

        /** A WebSocket relay owns both connections; the exchange's record is written. */
        record Upgraded() implements State {}

        /**
         * Over while dialing (the client left, or its body was refused): answered, nothing sent; its records (the
         * decision, then the outcome with {@code status}) are written once the dial resolves, so that they hold the
         * address and a dial's denial.
         */
        record Abandoned(int status) implements State {}

        /** Recorded and over. */
        record Ended() implements State {}
    }

    /** How far the request body has come from the client. */
    enum RequestBody { STREAMING, COMPLETE }

    private final ProxyContext context;
    private final Downstream down;
    private final AuditRecord audit;
    private final Destination destination;
    private final HttpRequest upstreamHead;
    private final SecretsStage secrets;     // null when the proxy has no secrets (and never had)
    private final ExchangeRequest.Upgrade upgrade;
    private final Dialer connector;
    /** Whose exchange slot this holds (taken by {@link ExchangeCore#start}), given back once, when it is recorded. */
    private final ClientKey client;
    private final long startNanos = System.nanoTime();
    private final ResponseFlow response;
    private State state = new State.Dialing(new ArrayDeque<>());
    private Future<UpstreamLease> dial;
    private RequestBody requestBody;
    private ScheduledFuture<?> headerTimer;
    private long bytesUp;
    private long bytesDown;
    private DocumentFilter document;     // null unless this is a registry's package document
    private GitPushGate push;            // null unless this is a git push whose ref updates decide its dial

    Exchange(ProxyContext context, Dialer connector, Downstream down, AuditRecord audit,
             Destination destination, HttpRequest upstreamHead, SecretsStage secrets, ExchangeRequest.Upgrade upgrade) {
        this.context = context;
        this.connector = connector;
        this.down = down;
        this.audit = audit;
        this.destination = destination;
        this.upstreamHead = upstreamHead;
        this.secrets = secrets;
        this.upgrade = upgrade;
        this.requestBody = RequestBody.STREAMING;     // until the last part, which every request has
        this.response = new ResponseFlow(this);
        this.client = ClientIdentity.limitKey(down.channel());
    }

    ProxyContext context() {
        return context;
    }

    /** The client side. */
    Downstream down() {
        return down;
    }

    AuditRecord audit() {
        return audit;
    }

    Destination destination() {
        return destination;
    }

    /** The request as it went upstream (its method tells whether a response can have a body). */
    HttpRequest upstreamHead() {
        return upstreamHead;
    }

    /** The secrets stage, or null when the proxy has no secrets and never had. */
    SecretsStage secrets() {
        return secrets;
    }

    /** The protocol the request asked to switch to (a 101 to anything else is refused). */
    ExchangeRequest.Upgrade upgrade() {
        return upgrade;
    }

    /** The registry stage's filter of the package document this exchange fetches, or null. */
    DocumentFilter document() {
        return document;
    }

    void filterDocument(DocumentFilter filter) {
        this.document = filter;
    }

    /**
     * Holds the dial until {@code gate} has read and decided the push's ref updates from the body's first parts
     * (held here meanwhile), then dials with {@code dialer}, or answers the gate's refusal once the body was read.
     */
    void gitPush(GitPushGate gate, java.util.function.Supplier<Future<UpstreamLease>> dialer) {
        this.push = gate;
        dialAfter(gate.verdict(), dialer);
        long idle = context.policy().proxy().timeouts().idle().toNanos();
        ScheduledFuture<?> timer = down.channel().eventLoop().schedule(() -> {
            if (gate.reading() && state instanceof State.Dialing) {     // a client that never sends its commands
                audit.denied(dev.sallyport.policy.GitReasons.COMMANDS_TIMEOUT);
                refuseDuringRequest(408, dev.sallyport.policy.GitReasons.COMMANDS_TIMEOUT);
            }
        }, idle, TimeUnit.NANOSECONDS);
        gate.verdict().whenComplete((answer, failure) -> timer.cancel(false));
        down.readRequestBody();
    }

    /** Dials the destination (after the core decided); the request goes out once the dialed address is checked. */
    void dial(Future<UpstreamLease> lease) {
        context.exchangeStarted();
        dialNow(lease);
    }

    private void dialNow(Future<UpstreamLease> lease) {
        dial = lease;
        lease.addListener(done -> upstreamReady(lease));
    }

    /**
     * Holds the dial until a stage that needs something first (a registry file's verdict) says go: then
     * {@code dialer} gives the lease, or the exchange is refused with {@code answer} (its reason in the record) as
     * if at once, nothing having gone upstream. The client may leave meanwhile; it is recorded as such.
     */
    void dialAfter(java.util.concurrent.CompletableFuture<io.netty.handler.codec.http.FullHttpResponse> gate,
                   java.util.function.Supplier<Future<UpstreamLease>> dialer) {
        context.exchangeStarted();
        gate.whenComplete((answer, failure) -> down.channel().eventLoop().execute(() -> {
            if (!(state instanceof State.Dialing) || dial != null) {
                if (answer != null) {
                    answer.release();
                }
                return;
            }
            if (answer == null && failure == null) {
                dialNow(dialer.get());
                return;
            }
            ((State.Dialing) state).pending().forEach(ReferenceCountUtil::release);
            int code = answer != null ? answer.status().code() : 502;
            audit.denied(answer != null ? answer.headers().get(dev.sallyport.proxy.http.Responses.REASON_HEADER)
                    : "upstream_failed").status(code);
            state = new State.Ended();
            cancelHeaderTimer();
            response.close();
            if (secrets != null) {
                secrets.close();
            }
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
            context.exchangeFinished();
            context.exchangeReleased(client);
            if (answer == null) {
                down.refuse(502, "upstream_failed", null, false);
                return;
            }
            down.send(answer, true).addListener((ChannelFutureListener) f -> down.ended(f.isSuccess()));
        }));
    }

    /** True while the client's request body still flows into this exchange. */
    public boolean awaitingRequestBody() {
        return requestBody == RequestBody.STREAMING && !(state instanceof State.Ended)
                && !(state instanceof State.Abandoned);
    }

    /** True until the exchange ended (or became a WebSocket relay): its own timeouts apply, not the client's idle. */
    public boolean inProgress() {
        return state instanceof State.Dialing || state instanceof State.Open;
    }

    private void upstreamReady(Future<UpstreamLease> future) {
        if (state instanceof State.Abandoned abandoned) {
            recordAbandoned(future, abandoned.status());
            return;
        }
        if (!future.isSuccess()) {
            UpstreamFailure failure = (UpstreamFailure) future.cause();
            audit.ip(failure.ip());
            if (failure.status() == 403) {
                audit.denied(failure.reason());
            }
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
            upstreamFailed(failure.status(), failure.reason(), failure.getMessage());
            return;
        }
        UpstreamLease lease = future.getNow();
        if (!(state instanceof State.Dialing dialing)) {
            connector.release(lease, false);    // never: Dialing until the dial resolves, or Abandoned
            return;
        }
        audit.ip(lease.ip()).upstreamProtocol(lease.protocol());
        if (!lease.h2()) {
            upstreamHead.headers().remove(HttpHeaderNames.TE);   // HTTP/1.1's TE is hop-by-hop
            if (destination.h2() && grpc(upstreamHead)) {
                connector.release(lease, true);     // nothing was written: still in step
                context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
                upstreamFailed(502, "grpc_needs_h2", "client " + audit.client() + " => " + destination.text()
                        + ": gRPC needs HTTP/2 end to end, and the upstream chose HTTP/1.1 in ALPN");
                return;
            }
        }
        boolean admitted = context.admit(new ProxyEvent.Decided(context.clock().instant(), "request",
                audit.fields()));
        if (!admitted) {    // nothing goes upstream that the audit log has not taken; the end record says why
            connector.release(lease, false);
            audit.denied("audit_unavailable");
            end(503);
            down.refuse(503, "audit_unavailable", null, false);
            return;
        }
        if (secrets != null && !secrets.boundTo(lease.destination().host())) {
            connector.release(lease, false);    // never: the lease is for the destination the secrets are bound to
            upstreamFailed(502, "upstream_failed", "the dialed destination is not the one the secrets were bound to");
            return;
        }
        state = new State.Open(lease);
        Channel upstream = lease.channel();
        upstream.pipeline().addLast(UpstreamHandler.NAME, new UpstreamHandler(this, response));
        upstream.attr(UpstreamInitializer.AWAITING_HEAD).set(true);
        upstream.write(upstreamHead).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess() && secrets != null) {
                secrets.sent(audit, context);   // the value went out: now it counts as injected
            }
        });
        for (HttpContent part : dialing.pending()) {
            upstream.write(part);
        }
        dialing.pending().clear();
        upstream.flush();
        long timeout = context.policy().proxy().timeouts().responseHeaders().toNanos();
        headerTimer = down.channel().eventLoop().schedule(() -> upstreamFailed(504, "upstream_timeout", "client "
                + audit.client() + " => " + destination.text() + ": no response headers within "
                + timeout / 1_000_000 + " ms"), timeout, TimeUnit.NANOSECONDS);
        upstream.read();
        if (requestBody == RequestBody.STREAMING) {
            down.readRequestBody();
        }
    }

    /** True for a gRPC request ({@code content-type: application/grpc}, with or without a suffix). */
    static boolean grpc(HttpRequest head) {
        return isGrpc(head.headers().get(HttpHeaderNames.CONTENT_TYPE));
    }

    /** True for a gRPC request's {@code content-type} ({@code application/grpc}, with or without a suffix). */
    public static boolean isGrpc(CharSequence contentType) {
        return contentType != null && contentType.toString().regionMatches(true, 0, "application/grpc", 0, 16);
    }

    /**
     * A part of the request body from the client: checked, then forwarded (or kept until the connection is up).
     * Every request's body ends with a {@link LastHttpContent}, an empty one for a request without a body.
     */
    public void requestBody(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        List<HttpContent> parts = new ArrayList<>(2);
        if (secrets == null) {
            parts.add(content);
        } else {
            InjectionResult.Refused refused = secrets.checkBody(content, parts);
            if (refused != null) {      // nothing of this part goes upstream; the upstream connection is dropped
                content.release();
                audit.denied(refused.reason()).secrets(refused.secrets());
                refuseDuringRequest(403, refused.reason());
                return;
            }
        }
        bytesUp += content.content().readableBytes();
        if (secrets != null) {
            content.release();  // what goes on is in parts
        }
        if (last) {
            requestBody = RequestBody.COMPLETE;
        }
        switch (state) {
            case State.Dialing d when push != null && push.holding() -> gitBody(d, parts, last);
            case State.Dialing d -> d.pending().addAll(parts);
            case State.Open o -> {
                if (parts.isEmpty()) {      // all of it waits to be judged with what comes next
                    down.readRequestBody();
                    return;
                }
                for (int i = 0; i < parts.size() - 1; i++) {
                    o.lease().channel().write(parts.get(i));
                }
                o.lease().channel().writeAndFlush(parts.getLast()).addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        upstreamFailed(502, "upstream_write_failed", "sending the request body failed");
                    } else if (!last && state == o) {
                        down.readRequestBody();
                    }
                });
            }
            default -> parts.forEach(ReferenceCountUtil::release);
        }
    }

    /** A part of a git push's body while its gate holds the dial: read, held (or dropped once refused). */
    private void gitBody(State.Dialing d, List<HttpContent> parts, boolean last) {
        if (!push.draining()) {
            d.pending().addAll(parts);
            for (int i = 0; i < parts.size() && push.reading(); i++) {
                push.offer(parts.get(i).content(), last && i == parts.size() - 1);
            }
            if (parts.isEmpty() && last) {
                push.offer(io.netty.buffer.Unpooled.EMPTY_BUFFER, true);
            }
            if (push.refused()) {           // nothing of the body goes anywhere
                d.pending().forEach(ReferenceCountUtil::release);
                d.pending().clear();
            }
        } else {
            parts.forEach(ReferenceCountUtil::release);
            if (last) {
                push.bodyEnded();
            }
        }
        if (push.holding() && !last) {
            down.readRequestBody();
        }
    }

    /** The client's request broke its framing (or a limit) mid-body: the exchange is refused with that answer. */
    public void requestViolation(int status, String reason) {
        refuseDuringRequest(status, reason);
    }

    private void refuseDuringRequest(int status, String reason) {
        audit.reason(reason);
        dropUpstream();
        fail(status, reason, null);
    }

    /** Ends the exchange with an answer of {@code status}, or, once the response started, by ending the client's. */
    private void fail(int status, String reason, String detail) {
        if (response.started()) {
            end(response.status());
            down.abort();
        } else {
            end(status);
            down.refuse(status, reason, detail, false);
        }
    }

    /** The upstream side failed: a 502/504 if nothing was sent yet, otherwise the client connection ends. */
    void upstreamFailed(int status, String reason, String message) {
        if (!inProgress() || response.lastSent()) {
            return;     // after the last part of the response is written, its write listener ends the exchange
        }
        dropUpstream();
        audit.reason(reason);
        if (status != 403) {
            LOGGER.warn("{}", message);
        }
        fail(status, reason, message);
    }

    /** The client connection closed: the exchange ends (499 when no response had started). */
    public void downstreamClosed() {
        if (inProgress()) {
            audit.reason("client_closed");
            dropUpstream();
            end(response.started() ? response.status() : 499);
        }
    }

    /** The client drained its outbound buffer. */
    public void downstreamWritable() {
        if (state instanceof State.Open) {
            response.downstreamWritable();
        }
    }

    /** The lease in use, or null before the dial completed and after the exchange. */
    UpstreamLease lease() {
        return state instanceof State.Open o ? o.lease() : null;
    }

    RequestBody requestProgress() {
        return requestBody;
    }

    void cancelHeaderTimer() {
        if (headerTimer != null) {
            headerTimer.cancel(false);
            headerTimer = null;
        }
    }

    void countDown(long bytes) {
        bytesDown += bytes;
    }

    long bytesUp() {
        return bytesUp;
    }

    long bytesDown() {
        return bytesDown;
    }

    long elapsedMs() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** After the last part of the response was written: the connection goes back to the pool or closes. */
    void responseWritten(boolean success, boolean reusable) {
        UpstreamLease lease = lease();
        if (lease != null) {
            removeHandler(lease.channel());
            connector.release(lease, success && reusable && requestBody == RequestBody.COMPLETE);
        }
        end(response.status());
        down.ended(success && response.clientMayStayOpen());
    }

    /** The 101 went out: the relay takes both connections over; the exchange's record is written now. */
    void upgraded() {
        UpstreamLease lease = lease();
        if (lease == null) {
            return;
        }
        removeHandler(lease.channel());
        cancelHeaderTimer();
        state = new State.Upgraded();
        audit.status(101);
        context.emit(new ProxyEvent.ExchangeCompleted(context.clock().instant(), audit.fields()));
        context.exchangeFinished();
        context.exchangeReleased(client);
        WebSocketStage.start(this, lease.channel(), response.takeEarlyBytes());
    }

    /** The 101 could not be written to the client. */
    void upgradeFailed() {
        UpstreamLease lease = lease();
        end(101);
        if (lease != null) {
            lease.channel().close();
        }
        down.abort();
    }

    private void dropUpstream() {
        cancelHeaderTimer();
        UpstreamLease lease = lease();
        if (lease != null) {
            removeHandler(lease.channel());
            connector.release(lease, false);
        }
    }

    private static void removeHandler(Channel upstream) {
        if (upstream.pipeline().get(UpstreamHandler.NAME) != null) {
            upstream.pipeline().remove(UpstreamHandler.NAME);
        }
    }

    /** Ends the exchange once; its record (status, bytes, duration) now, or, while dialing, once the dial resolved. */
    private void end(int status) {
        if (!inProgress()) {
            return;
        }
        boolean dialing = state instanceof State.Dialing && dial != null && !dial.isDone();
        if (state instanceof State.Dialing d) {
            d.pending().forEach(ReferenceCountUtil::release);
        }
        state = dialing ? new State.Abandoned(status) : new State.Ended();
        if (push != null) {
            push.release();
        }
        cancelHeaderTimer();
        response.close();
        if (secrets != null) {
            secrets.close();
        }
        if (!dialing) {
            record(status);
        }
    }

    /**
     * The dial of an exchange that ended while dialing resolved: its decision (without a status) and its outcome
     * record, with the address and any denial of the dial.
     */
    private void recordAbandoned(Future<UpstreamLease> future, int status) {
        if (future.isSuccess()) {
            UpstreamLease lease = future.getNow();
            audit.ip(lease.ip());
            connector.release(lease, false);
        } else {
            UpstreamFailure failure = (UpstreamFailure) future.cause();
            audit.ip(failure.ip());
            if (failure.status() == 403 && !"deny".equals(audit.decision())) {
                audit.denied(failure.reason());     // a denied address stays on record, client gone or not
            }
        }
        state = new State.Ended();
        // the decision as a dialed exchange records it (counted once), then the one record with a status
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
        record(status);
    }

    private void record(int status) {
        audit.status(status).bytes(bytesUp, bytesDown).duration(elapsedMs());
        context.emit(new ProxyEvent.ExchangeCompleted(context.clock().instant(), audit.fields()));
        context.exchangeFinished();
        context.exchangeReleased(client);
    }

    /** Bytes that came after a WebSocket 101, for the relay. */
    void upgradedBytes(ByteBuf raw) {
        response.earlyBytes(raw);
    }
}
