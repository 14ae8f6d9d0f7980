package dev.sallyport.proxy.connect;

import dev.sallyport.ca.LeafMinter;
import dev.sallyport.proxy.dns.DnsStub;
import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.http.FrontendHandler;
import dev.sallyport.proxy.http.HttpFramingGuard;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.http2.Http2Connections;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.limits.Admission;
import dev.sallyport.proxy.mitm.ServerContexts;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.timeout.IdleStateEvent;
import java.nio.charset.StandardCharsets;

/**
 * Builds a client connection's pipeline: refuse it beyond its client's {@code limits.maxConnectionsPerClient} (429)
 * or the proxy's {@code limits.maxConnections} (503), audited, then close; else count it, close it after
 * {@code timeouts.idle} without traffic, then the HTTP phase with the CONNECT handler in front.
 */
public final class FrontendInitializer extends ChannelInitializer<SocketChannel> {

    private final ProxyContext context;
    private final ClientPipeline pipeline;
    private final SyntheticAddresses transparent;
    private final OriginalDestination source;

    /** The main listener's: {@code dns} answers registered sandboxes' relayed DNS, whose mappings they connect to. */
    public FrontendInitializer(ProxyContext context, ExchangeCore core, UpstreamConnector connector,
                               LeafMinter minter, ServerContexts serverContexts, DnsStub dns) {
        this(context, core, connector, minter, serverContexts, dns, null, null);
    }

    /**
     * With {@code transparent}: the initializer of a transparent listener, whose connections' original destination
     * comes from {@code source} and whose synthetic addresses stand for the names of that DNS stub.
     */
    public FrontendInitializer(ProxyContext context, ExchangeCore core, UpstreamConnector connector,
                               LeafMinter minter, ServerContexts serverContexts, DnsStub dns,
                               /* @Nullable */ SyntheticAddresses transparent,
                               /* @Nullable */ OriginalDestination source) {
        this.context = context;
        this.pipeline = new ClientPipeline(context, core, connector, minter, serverContexts, dns);
        this.transparent = transparent;
        this.source = source;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        Admission admission = ConnectionSlot.open(context, ch);
        if (admission != Admission.ADMITTED) {
            refuse(ch, admission == Admission.CLIENT_LIMIT ? 429 : 503, ConnectionSlot.reason(admission));
            return;
        }
        ConnectionSlot.track(context, ch);
        if (transparent != null) {
            pipeline.installTransparent(ch, transparent, source);
        } else {
            pipeline.install(ch);
        }
        ch.read();
    }

    /**
     * Answers a connection over a limit before any byte is read (no HTTP codec yet), audited (with its arrival on a
     * transparent listener), and closes it.
     */
    private void refuse(SocketChannel ch, int status, String reason) {
        AuditRecord audit = new AuditRecord(context.nextId(), ch.remoteAddress()).denied(reason);
        audit.status(status);
        if (transparent != null) {
            audit.arrival(TunnelTarget.TRANSPARENT);
        }
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
        pipeline.answerAndClose(ch, rawAnswer(ch.alloc(), status, reason));
    }

    /** An error answer as bytes, for a connection refused before (or without) its HTTP codec. */
    static ByteBuf rawAnswer(ByteBufAllocator alloc, int status, String reason) {
        var response = Responses.error(alloc, status, reason, null);
        var text = new StringBuilder("HTTP/1.1 ").append(response.status()).append("\r\n");
        response.headers().forEach(h -> text.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n"));
        text.append("\r\n");
        ByteBuf buf = alloc.buffer();
        buf.writeCharSequence(text, StandardCharsets.US_ASCII);
        buf.writeBytes(response.content());
        response.release();
        return buf;
    }

    /**
     * Closes a client connection that saw no traffic in either direction for {@code timeouts.idle}, unless an
     * exchange is waiting on a slow upstream (the response-headers and upstream idle timeouts cover that).
     */
    static final class IdleCloser extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                FrontendHandler frontend = ctx.pipeline().get(FrontendHandler.class);
                Http2FrameCodec h2 = ctx.pipeline().get(Http2FrameCodec.class);
                boolean busy = (frontend != null && frontend.busy()) || (h2 != null && Http2Connections.busy(h2));
                // a request head that started and stalled gets its 408 from the guard's deadline (due now too)
                HttpFramingGuard guard = ctx.pipeline().get(HttpFramingGuard.class);
                boolean headPending = guard != null && guard.headInProgress();
                if (!busy && !headPending) {
                    ctx.close();
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }
    }
}
