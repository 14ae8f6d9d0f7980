package dev.sallyport.ca;

import java.time.Duration;

/**
 * Told about certificate minting, for metrics ({@code sallyport_cert_mint_seconds},
 * {@code sallyport_cert_cache_hits_total}). Called on the minting executor or the caller's thread: implementations
 * must be fast, thread-safe and must not throw (exceptions are logged and ignored).
 */
public interface MintListener {
    /** A new certificate was signed for {@code host}; {@code took} is the wall time of the signing task. */
    void minted(String host, Duration took);

    /** A request for {@code host} was served from the cache (or joined a mint already in flight). */
    void cacheHit(String host);

    /** A listener that ignores everything. */
    MintListener NONE = new MintListener() {
        @Override
        public void minted(String host, Duration took) {
        }

        @Override
        public void cacheHit(String host) {
        }

        @Override
        public String toString() {
            return "MintListener.NONE";
        }
    };
}
