package dev.sallyport.proxy.connect;

import dev.sallyport.ca.LeafMinter;
import dev.sallyport.policy.Limits;
import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.dns.DnsServer;
import dev.sallyport.proxy.dns.DnsStub;
import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.http.FrontendHandler;
import dev.sallyport.proxy.http.HttpFramingGuard;
import dev.sallyport.proxy.http.LingeringClose;
import dev.sallyport.proxy.http2.Http2Connections;
import dev.sallyport.proxy.internal.ClientPhases;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.mitm.InterceptHandshakeHandler;
import dev.sallyport.proxy.mitm.InterceptSniHandler;
import dev.sallyport.proxy.mitm.PassthroughHandler;
import dev.sallyport.proxy.mitm.ServerContexts;
import dev.sallyport.proxy.mitm.TlsRecordCheck;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Owns every client connection's pipeline: the handler names and each change of phase. Nothing else adds or
 * removes a client handler; handlers that end a phase ask through {@link ClientPhases}.
 *
 * <pre>
 * accept     bytes, idle, idle-closer
 * identity     + the relay's PROXY v2 header with a sandbox's token, if any (gone once read; none: anonymous);
 *                a relayed transparent connection: - guard, codec, connect, frontend -> tunnel (the sandbox's first
 *                bytes still checked); a relayed DNS stream: - guard, codec, connect, frontend + dns codec, answers
 * transparent  + original destination (PROXY v2, or conntrack)  -> tunnel, as after a CONNECT's 200
 * HTTP       + guard, codec, connect, frontend            (FrontendHandler feeds the exchange core)
 * tunnel     - guard, codec, connect, frontend  + tls-check, then
 *              intercept: sni, handshake  -> HTTP again (guard, codec, frontend bound to the tunnel),
 *                                            or, when ALPN chose h2, HTTP/2 (h2-flush, h2-guard, h2-codec,
 *                                            h2-streams: a frontend per stream; the connection reads freely,
 *                                            streams by flow control; h2-errors)
 *              passthrough: passthrough   -> relay
 *              plain HTTP (transparent arrivals only): - tls-check, sni, handshake  + guard, codec, frontend
 * upgraded   - guard, codec, frontend  + WebSocket guard (with secrets), relay
 * closing    + linger first (after the last answer: read and drop for a moment, then close)
 * </pre>
 */
public final class ClientPipeline implements ClientPhases {

    static final String COUNTER = "sallyport-bytes";
    static final String IDLE = "sallyport-idle";
    static final String IDLE_CLOSER = "sallyport-idle-closer";
    static final String CONNECT = "sallyport-connect";
    static final String TRANSPARENT = "sallyport-transparent";
    static final String IDENTITY = "sallyport-identity";
    static final String GUARD = "sallyport-http-guard";
    static final String CODEC = "sallyport-http-codec";
    static final String FRONTEND = "sallyport-frontend";
    static final String TLS_CHECK = "sallyport-tls-check";
    static final String SNI = "sallyport-sni";
    static final String HANDSHAKE = "sallyport-handshake";
    static final String PASSTHROUGH = "sallyport-passthrough";
    static final String RELAY = "sallyport-relay";
    static final String LINGER = "sallyport-linger";
    static final String H2_FLUSH = "sallyport-h2-flush";
    static final String H2_GUARD = "sallyport-h2-guard";
    static final String H2_CODEC = "sallyport-h2-codec";
    static final String H2_STREAMS = "sallyport-h2-streams";
    static final String H2_ERRORS = "sallyport-h2-errors";
    static final String DNS = "sallyport-dns";

    /** A request head must arrive within this long after its first byte (slowloris): idle, at most 30 s. */
    static final Duration MAX_HEAD_DEADLINE = Duration.ofSeconds(30);

    private final ProxyContext context;
    private final ExchangeCore core;
    private final UpstreamConnector connector;
    private final LeafMinter minter;
    private final ServerContexts serverContexts;
    private final DnsStub dns;

    /** {@code dns}: the stub that answers registered sandboxes' relayed DNS (and whose mappings they connect to). */
    ClientPipeline(ProxyContext context, ExchangeCore core, UpstreamConnector connector, LeafMinter minter,
                   ServerContexts serverContexts, DnsStub dns) {
        this.context = context;
        this.core = core;
        this.connector = connector;
        this.minter = minter;
        this.serverContexts = serverContexts;
        this.dns = dns;
    }

    /** The accept and HTTP phases of a new connection, with the CONNECT handler in front of the HTTP front end. */
    void install(Channel ch) {
        ChannelPipeline p = ch.pipeline();
        ByteCounter counter = addAccept(p);
        p.addLast(IDENTITY, new IdentityHeaderHandler(context, this,
                new TransparentRoute(context, this, dns.addresses(), counter)));
        addHttp(p, null);
        p.addBefore(FRONTEND, CONNECT, new ConnectHandler(context, this, counter));
    }

    /** A registered sandbox's relayed DNS stream: the HTTP phase goes, DNS over TCP answered as that sandbox. */
    void toRelayedDns(ChannelPipeline p, boolean aaaa) {
        removeHttpPhase(p);
        ChannelHandler[] handlers = DnsServer.relayedStream(dns, aaaa);
        for (int i = 0; i < handlers.length; i++) {
            p.addLast(DNS + "-" + i, handlers[i]);
        }
        p.channel().config().setAutoRead(true);     // small questions, each answered at once (as the stub's TCP listener)
    }

    /** Byte counter, idle timeout and its closer: the accept phase of every client connection. */
    private ByteCounter addAccept(ChannelPipeline p) {
        ByteCounter counter = new ByteCounter();
        p.addLast(COUNTER, counter);
        long idle = context.policy().proxy().timeouts().idle().toMillis();
        p.addLast(IDLE, new IdleStateHandler(0, 0, idle, TimeUnit.MILLISECONDS));
        p.addLast(IDLE_CLOSER, new FrontendInitializer.IdleCloser());
        return counter;
    }

    /**
     * The accept phase of a transparent connection: its original destination (a PROXY v2 header, or the kernel's
     * connection tracking), then the tunnel phase as if a CONNECT to it had been answered 200
     * ({@link TransparentRoute}).
     */
    void installTransparent(Channel ch, SyntheticAddresses addresses, OriginalDestination source) {
        ChannelPipeline p = ch.pipeline();
        ByteCounter counter = addAccept(p);
        TransparentRoute route = new TransparentRoute(context, this, addresses, counter);
        p.addLast(TRANSPARENT, switch (source) {
            case PROXY_HEADER -> new OriginalDestinationHandler(route);
            case CONNECTION_TRACKING -> new KernelDestinationHandler(route);
        });
    }

    /**
     * A transparent connection's destination was allowed: the tunnel phase begins, after the transparent listener's
     * accept phase, or after the main listener's HTTP phase (a relayed transparent connection, still behind its
     * identity header's check of the sandbox's first bytes).
     */
    void transparentToTunnel(ChannelPipeline p, TunnelTarget tunnel, boolean passthrough) {
        addTunnel(p, tunnel, passthrough);
        if (p.get(TRANSPARENT) != null) {
            p.remove(TRANSPARENT);
        } else {
            removeHttpPhase(p);
        }
    }

    /** An allowed CONNECT was answered 200: the HTTP phase goes, the tunnel phase begins. */
    void toTunnel(ChannelPipeline p, TunnelTarget tunnel, boolean passthrough) {
        addTunnel(p, tunnel, passthrough);
        removeHttpPhase(p);
    }

    private static void removeHttpPhase(ChannelPipeline p) {
        p.remove(FRONTEND);
        p.remove(GUARD);
        p.remove(CODEC);
        p.remove(CONNECT);
    }

    private void addTunnel(ChannelPipeline p, TunnelTarget tunnel, boolean passthrough) {
        p.addLast(TLS_CHECK, new TlsRecordCheck(context, tunnel, this));
        if (passthrough) {
            p.addLast(PASSTHROUGH, new PassthroughHandler(context, connector, tunnel, this, n -> { }, n -> { }));
        } else {
            long tlsTimeout = context.policy().proxy().timeouts().tls().toMillis();
            p.addLast(SNI, new InterceptSniHandler(minter, serverContexts, tunnel, p.channel().eventLoop(),
                    tlsTimeout, context.policy().proxy().http2()));
            p.addLast(HANDSHAKE, new InterceptHandshakeHandler(context, tunnel, this));
        }
    }

    @Override
    public void tlsChecked(ChannelPipeline pipeline) {
        pipeline.remove(TLS_CHECK);
    }

    @Override
    public void toPlainHttp(ChannelPipeline pipeline, TunnelTarget tunnel) {
        addHttp(pipeline, tunnel);
        pipeline.remove(SNI);
        pipeline.remove(HANDSHAKE);
        pipeline.remove(TLS_CHECK);
    }

    @Override
    public void toHttp(ChannelPipeline pipeline, TunnelTarget tunnel) {
        SslHandler tls = pipeline.get(SslHandler.class);
        if (tls != null && ApplicationProtocolNames.HTTP_2.equals(tls.applicationProtocol())) {
            Policy policy = context.policy();
            Http2Connections.Handlers h2 = Http2Connections.handlers(policy.proxy().limits(), core, tunnel,
                    headDeadline(policy.proxy().timeouts().idle()));
            // many streams flush at once: one TLS record and one write for the frames of a loop turn
            pipeline.addLast(H2_FLUSH, new FlushConsolidationHandler(
                    FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
            pipeline.addLast(H2_GUARD, h2.guard());
            pipeline.addLast(H2_CODEC, h2.codec());
            pipeline.addLast(H2_STREAMS, h2.streams());
            pipeline.addLast(H2_ERRORS, h2.errors());
            pipeline.channel().config().setAutoRead(true);
        } else {
            addHttp(pipeline, tunnel);
        }
        pipeline.remove(HANDSHAKE);
    }

    @Override
    public Channel toRelay(ChannelPipeline pipeline, List<ChannelHandler> inbound) {
        for (int i = 0; i < inbound.size(); i++) {
            pipeline.addLast(i == inbound.size() - 1 ? RELAY : RELAY + "-" + i, inbound.get(i));
        }
        pipeline.remove(FRONTEND);
        pipeline.remove(CODEC);
        pipeline.remove(GUARD);
        return pipeline.channel();
    }

    @Override
    public void answerAndClose(Channel channel, Object response) {
        LingeringClose.respondAndClose(channel, response, LINGER);
    }

    @Override
    public void toPassthroughRelay(ChannelPipeline pipeline, ChannelHandler relay) {
        pipeline.addAfter(PASSTHROUGH, RELAY, relay);
        pipeline.remove(PASSTHROUGH);
    }

    /** Framing guard, Netty's codec configured strictly (the guard refused what it would accept leniently), front end. */
    private void addHttp(ChannelPipeline p, TunnelTarget tunnel) {
        Policy policy = context.policy();
        Limits limits = policy.proxy().limits();
        p.addLast(GUARD, new HttpFramingGuard(limits, headDeadline(policy.proxy().timeouts().idle())));
        p.addLast(CODEC, new HttpServerCodec(decoderConfig(limits)));
        p.addLast(FRONTEND, new FrontendHandler(core, tunnel, this));
    }

    /** Netty's decoder behind the framing guard, strict (the fuzz target of the guard reads with it too). */
    public static HttpDecoderConfig decoderConfig(Limits limits) {
        return new HttpDecoderConfig()
                .setMaxInitialLineLength(limits.maxInitialLineBytes() + 64)
                .setMaxHeaderSize(limits.maxHeaderBytes() + 64)
                .setMaxChunkSize(64 * 1024)
                .setAllowDuplicateContentLengths(false)
                .setAllowPartialChunks(true)
                .setStrictLineParsing(true)
                .setValidateHeaders(true);
    }

    static Duration headDeadline(Duration idle) {
        return idle.compareTo(MAX_HEAD_DEADLINE) < 0 ? idle : MAX_HEAD_DEADLINE;
    }
}
