package dev.sallyport.proxy.http;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.RelayHandler;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerCodec;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The WebSocket phase of an exchange, once its {@code 101} reached the client: both pipelines drop their HTTP
 * handlers and relay. With secrets, the client side reads frames through {@code MessageGuardHandler} (each message
 * checked like a request body) and the upstream side through {@code MessageScrubHandler} (each message scrubbed);
 * without, bytes are relayed as they are. Audited as {@code websocket_end} when the client connection closes, and
 * a refused message as a {@code websocket_message} decision.
 */
final class WebSocketRelay {

    private WebSocketRelay() {}

    /**
     * Turns both pipelines into the relay. The client side goes first: once it is a WebSocket nothing may pass its
     * HTTP encoder (which refuses raw bytes, silently losing the frames). Then the upstream side: the bytes that
     * came after the {@code 101} head (decoded by the HTTP codec and kept in {@link Exchange#upgradeBytes}, then
     * whatever is still in the codec's buffer when it is removed) pass the scrubber and the relay first, in order.
     * Both relays ask for the next read when they are added.
     */
    static void start(FrontendHandler frontend, Exchange exchange, Channel client, Channel upstream) {
        AuditRecord audit = exchange.audit;
        audit.status(101);
        frontend.context.emit(new ProxyEvent.ExchangeCompleted(frontend.context.clock().instant(), audit.fields()));
        AtomicLong up = new AtomicLong(exchange.bytesUp);
        AtomicLong down = new AtomicLong(exchange.bytesDown);
        AtomicReference<InjectionResult.Refused> refusal = new AtomicReference<>();
        SecretsStep secrets = exchange.secrets;
        ChannelPipeline cp = client.pipeline();
        if (secrets != null) {
            secrets.close();    // the HTTP scrubber; each message gets its own
            cp.addLast(secrets.messageGuard(r -> {
                refusal.set(r);
                audit.denied(r.reason()).secrets(List.of(r.secret()));
                frontend.context.emit(new ProxyEvent.Decided(frontend.context.clock().instant(), "websocket_message",
                        audit.fields()));
            }, upstream));
        }
        cp.addLast(new RelayHandler(upstream, up::addAndGet));
        cp.remove(frontend);
        cp.remove(HttpServerCodec.class);
        cp.remove(HttpFramingGuard.class);
        frontend.context.exchangeFinished();
        exchange.finished = true;
        frontend.current = null;
        ChannelPipeline up2 = upstream.pipeline();
        up2.remove(BackendHandler.NAME);
        if (secrets != null) {
            up2.addLast(secrets.messageScrubber());
        }
        up2.addLast(new RelayHandler(client, down::addAndGet));
        ChannelHandlerContext codec = up2.context(UpstreamInitializer.CODEC);
        while (!exchange.upgradeBytes.isEmpty()) {
            codec.fireChannelRead(exchange.upgradeBytes.poll());
        }
        up2.remove(UpstreamInitializer.CODEC);
        client.closeFuture().addListener(c -> {
            upstream.close();
            audit.bytes(up.get(), down.get()).duration(exchange.elapsedMs());
            if (refusal.get() == null) {
                audit.reason("websocket_end");
            }
            frontend.context.emit(new ProxyEvent.TunnelEnded(frontend.context.clock().instant(), "websocket_end",
                    audit.fields()));
        });
    }
}
