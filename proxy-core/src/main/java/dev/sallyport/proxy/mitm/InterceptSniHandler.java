package dev.sallyport.proxy.mitm;

import dev.sallyport.ca.LeafMinter;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.EventExecutor;

/**
 * Reads the ClientHello's SNI, checks it and mints (through {@link MintingMapping}), then installs the TLS
 * handler of the shared server context with the tunnel's CONNECT target as the engine's peer host, which is how
 * {@link ServerContexts} knows which leaf to present.
 */
public final class InterceptSniHandler extends SniHandler {

    private final TunnelTarget tunnel;
    private final long tlsTimeoutMillis;

    public InterceptSniHandler(LeafMinter minter, ServerContexts contexts, TunnelTarget tunnel, EventExecutor loop,
                               long handshakeTimeoutMillis, boolean http2) {
        super(new MintingMapping(minter, contexts, tunnel, loop, http2), handshakeTimeoutMillis);
        this.tunnel = tunnel;
        this.tlsTimeoutMillis = handshakeTimeoutMillis;
    }

    @Override
    protected SslHandler newSslHandler(SslContext context, ByteBufAllocator allocator) {
        SslHandler handler = context.newHandler(allocator, tunnel.host(), tunnel.port());
        handler.setHandshakeTimeoutMillis(tlsTimeoutMillis);
        return handler;
    }
}
