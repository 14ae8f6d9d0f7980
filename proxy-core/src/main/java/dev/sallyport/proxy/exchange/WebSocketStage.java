package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.RelayHandler;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The WebSocket stage of an exchange, once its {@code 101} reached the client: both connections become a relay.
 * With secrets, the client side reads frames through {@code MessageGuardHandler} (each message checked like a
 * request body) and the upstream side through {@code MessageScrubHandler} (each message scrubbed); without, bytes
 * are relayed as they are. Audited as {@code websocket_end} when the client connection closes, and a refused
 * message as a {@code websocket_message} decision.
 */
final class WebSocketStage {

    private WebSocketStage() {}

    /**
     * Turns both connections into the relay. The client side goes first (its front end takes its protocol handlers
     * off: once it is a WebSocket nothing may pass its HTTP encoder, which refuses raw bytes). Then the upstream
     * side: the bytes that came after the {@code 101} head ({@code early}, then whatever is still in the codec's
     * buffer when it is removed) pass the scrubber and the relay first, in order. Both relays ask for the next read
     * when they are added.
     */
    static void start(Exchange exchange, Channel upstream, ArrayDeque<ByteBuf> early) {
        ProxyContext context = exchange.context();
        AuditRecord audit = exchange.audit();
        AtomicLong up = new AtomicLong(exchange.bytesUp());
        AtomicLong down = new AtomicLong(exchange.bytesDown());
        AtomicReference<InjectionResult.Refused> refusal = new AtomicReference<>();
        SecretsStage secrets = exchange.secrets();
        List<ChannelHandler> clientSide = new ArrayList<>(2);
        if (secrets != null) {
            secrets.close();    // the HTTP scrubber; each message gets its own
            clientSide.add(secrets.messageGuard(r -> {
                refusal.set(r);
                audit.denied(r.reason()).secrets(r.secrets());
                context.emit(new ProxyEvent.Decided(context.clock().instant(), "websocket_message", audit.fields()));
            }, upstream));
        }
        clientSide.add(new RelayHandler(upstream, up::addAndGet));
        Channel client = exchange.down().becomeRelay(clientSide);
        ChannelPipeline pipeline = upstream.pipeline();
        if (secrets != null) {
            pipeline.addLast(secrets.messageScrubber());
        }
        pipeline.addLast(new RelayHandler(client, down::addAndGet));
        ChannelHandlerContext codec = pipeline.context(UpstreamInitializer.CODEC);
        while (!early.isEmpty()) {
            codec.fireChannelRead(early.poll());
        }
        pipeline.remove(UpstreamInitializer.CODEC);
        client.closeFuture().addListener(c -> {
            upstream.close();
            audit.bytes(up.get(), down.get()).duration(exchange.elapsedMs());
            if (secrets != null) {
                secrets.recordForwarded();      // placeholders the client's messages carried on unchanged
            }
            if (refusal.get() == null) {
                audit.reason("websocket_end");
            }
            context.emit(new ProxyEvent.TunnelEnded(context.clock().instant(), "websocket_end", audit.fields()));
        });
    }
}
