package dev.sallyport.proxy.mitm;

import dev.sallyport.ca.LeafCertificate;
import dev.sallyport.ca.LeafMinter;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.handler.ssl.SslContext;
import io.netty.util.AsyncMapping;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * {@link io.netty.handler.ssl.SniHandler}'s async mapping for one tunnel: the SNI must name the CONNECT target
 * (missing only for IP-literal targets), then the certificate for the CONNECT target comes from the minter's
 * cache or from a mint on its executor; the event loop never blocks.
 */
public final class MintingMapping implements AsyncMapping<String, SslContext> {

    private final LeafMinter minter;
    private final ServerContexts contexts;
    private final TunnelTarget tunnel;
    private final EventExecutor loop;
    private final boolean http2;
    private final SniVerdict verdict;

    /** @param http2 whether ALPN offers {@code h2} (the policy's {@code proxy.http2} when the tunnel opened) */
    public MintingMapping(LeafMinter minter, ServerContexts contexts, TunnelTarget tunnel, EventExecutor loop,
                          boolean http2) {
        this.minter = minter;
        this.http2 = http2;
        this.contexts = contexts;
        this.tunnel = tunnel;
        this.loop = loop;
        this.verdict = new SniVerdict(tunnel.host());
    }

    @Override
    public Future<SslContext> map(String sni, Promise<SslContext> promise) {
        SniRefused refused = verdict.check(sni);
        if (refused != null) {
            return promise.setFailure(refused);
        }
        LeafCertificate cached = minter.cachedOrNull(tunnel.host());
        if (cached != null) {
            complete(cached, null, promise);
            return promise;
        }
        minter.mint(tunnel.host()).whenComplete((leaf, error) -> loop.execute(() -> complete(leaf, error, promise)));
        return promise;
    }

    private void complete(LeafCertificate leaf, Throwable error, Promise<SslContext> promise) {
        if (error != null) {
            promise.tryFailure(new SniRefused("cert_mint_failed", "minting a certificate for " + tunnel.host()
                    + " failed: " + error.getMessage()));
            return;
        }
        promise.trySuccess(contexts.forLeaf(tunnel.host(), leaf, http2));
    }
}
