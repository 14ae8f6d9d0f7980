package dev.sallyport.proxy.http;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.upstream.UpstreamFailure;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Carries one exchange's request to the upstream: the head once the connection is ready, then the body parts,
 * the next client read only after the upstream write succeeded; arms the response-headers timeout and turns
 * upstream failures into 502/504 (or a close when the response had started).
 */
final class RequestRelay {

    private final FrontendHandler frontend;

    RequestRelay(FrontendHandler frontend) {
        this.frontend = frontend;
    }

    /** The request's decision, after the dial check: allow, or deny when network.deny refused every address. */
    private void recordDecision(Exchange exchange) {
        frontend.context.emit(new ProxyEvent.Decided(frontend.context.clock().instant(), "request",
                exchange.audit.fields()));
    }

    void upstreamReady(Exchange exchange, Future<UpstreamLease> future) {
        if (!future.isSuccess()) {
            UpstreamFailure failure = (UpstreamFailure) future.cause();
            exchange.audit.ip(failure.ip());
            if (failure.status() == 403) {
                exchange.audit.denied(failure.reason());
            }
            recordDecision(exchange);
            upstreamFailed(exchange, failure.status(), failure.reason(), failure.getMessage());
            return;
        }
        UpstreamLease lease = future.getNow();
        exchange.audit.ip(lease.ip());
        boolean admitted = frontend.context.admit(new ProxyEvent.Decided(frontend.context.clock().instant(),
                "request", exchange.audit.fields()));
        if (exchange != frontend.current || exchange.finished) {
            frontend.connector().release(lease, false);
            return;
        }
        if (!admitted) {   // nothing goes upstream that the audit log has not taken; the end record says why
            frontend.connector().release(lease, false);
            exchange.audit.denied("audit_unavailable");
            frontend.finish(exchange, 503);
            frontend.refuse(503, "audit_unavailable", exchange.audit, null);
            return;
        }
        exchange.lease = lease;
        lease.channel().pipeline().addLast(BackendHandler.NAME, new BackendHandler(frontend, exchange));
        lease.channel().attr(UpstreamInitializer.AWAITING_HEAD).set(true);
        lease.channel().write(exchange.upstreamHead);
        while (!exchange.pendingBody.isEmpty()) {
            lease.channel().write(exchange.pendingBody.poll());
        }
        lease.channel().flush();
        long timeout = frontend.context.policy().proxy().timeouts().responseHeaders().toNanos();
        exchange.headerTimer = frontend.ctx.executor().schedule(() -> upstreamFailed(exchange, 504, "upstream_timeout",
                "client " + exchange.audit.client() + " => " + exchange.destination.text()
                        + ": no response headers within " + timeout / 1_000_000 + " ms"), timeout, TimeUnit.NANOSECONDS);
        lease.channel().read();
        if (!exchange.requestDone) {
            frontend.ctx.read();
        }
    }

    void body(Exchange exchange, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        InjectionResult.Refused refused = exchange.secrets == null ? null : exchange.secrets.checkBody(content);
        if (refused != null) {      // nothing of this chunk goes upstream; the upstream connection is dropped
            content.release();
            exchange.audit.denied(refused.reason()).secrets(java.util.List.of(refused.secret()));
            frontend.refuseDuringExchange(exchange, new Violation(403, refused.reason()));
            return;
        }
        exchange.bytesUp += content.content().readableBytes();
        exchange.requestDone = last;
        if (exchange.lease == null) {
            exchange.pendingBody.add(content);
            return;
        }
        exchange.lease.channel().writeAndFlush(content).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                upstreamFailed(exchange, 502, "upstream_write_failed", "sending the request body failed");
            } else if (!last && exchange == frontend.current) {
                frontend.ctx.read();
            }
        });
    }

    /** The upstream side failed: a 502/504 if nothing was sent yet, otherwise the client connection closes. */
    void upstreamFailed(Exchange exchange, int status, String reason, String message) {
        if (exchange.finished || exchange.upgraded || exchange.responseDone) {
            return;     // after the last part of the response is written, its write listener ends the exchange
        }
        exchange.cancelHeaderTimer();
        if (exchange.lease != null) {
            if (exchange.lease.channel().pipeline().get(BackendHandler.NAME) != null) {
                exchange.lease.channel().pipeline().remove(BackendHandler.NAME);
            }
            frontend.connector().release(exchange.lease, false);
        }
        exchange.audit.reason(reason);
        if (status != 403) {
            FrontendHandler.LOGGER.warn("{}", message);
        }
        boolean started = exchange.responseStarted;
        frontend.finish(exchange, started ? exchange.status : status);
        if (started) {
            frontend.closing = true;
            frontend.ctx.close();
        } else {
            frontend.writeError(status, reason, message);
        }
    }
}
