package dev.sallyport.proxy.http;

import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;

/**
 * One forwarded request and its response, owned by a {@link FrontendHandler} on one event loop. Holds what the
 * audit record needs (bytes, duration, status) and the body parts that arrived before the upstream connection.
 */
final class Exchange {

    final AuditRecord audit;
    final Destination destination;
    final HttpRequest upstreamHead;
    final boolean websocket;
    final boolean clientKeepAlive;
    final long startNanos = System.nanoTime();
    final ArrayDeque<HttpContent> pendingBody = new ArrayDeque<>();
    final ArrayDeque<ByteBuf> upgradeBytes = new ArrayDeque<>();

    SecretsStep secrets;   // null when the proxy has no secrets
    UpstreamLease lease;
    ScheduledFuture<?> headerTimer;
    boolean requestDone;
    boolean responseStarted;
    boolean responseDone;
    /** The client's outbound buffer was full: read the next part of the response once it drains. */
    boolean readWhenClientWritable;
    /** The client's outbound buffer was full: go on writing the scrubbed (decoded) body once it drains. */
    boolean pumpWhenClientWritable;
    /** The response head is written to the client but not flushed yet. */
    boolean clientFlushPending;
    boolean closeClientAfter;
    boolean upstreamReusable;
    boolean informational;
    boolean upgraded;
    boolean finished;
    int status;
    long bytesUp;
    long bytesDown;

    Exchange(AuditRecord audit, Destination destination, HttpRequest upstreamHead, boolean websocket,
             boolean clientKeepAlive) {
        this.audit = audit;
        this.destination = destination;
        this.upstreamHead = upstreamHead;
        this.websocket = websocket;
        this.clientKeepAlive = clientKeepAlive;
    }

    long elapsedMs() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    void cancelHeaderTimer() {
        if (headerTimer != null) {
            headerTimer.cancel(false);
            headerTimer = null;
        }
    }

    void releasePending() {
        pendingBody.forEach(ReferenceCountUtil::release);
        pendingBody.clear();
        upgradeBytes.forEach(ReferenceCountUtil::release);
        upgradeBytes.clear();
        if (secrets != null && !upgraded) {
            secrets.close();
        }
    }
}
