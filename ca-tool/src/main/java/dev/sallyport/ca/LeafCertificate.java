package dev.sallyport.ca;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Objects;

/**
 * A minted server certificate and its key, ready for a TLS server context.
 *
 * @param key   the leaf private key (shared by all leaves of one {@link LeafMinter})
 * @param chain {@code chain[0]} is the leaf, followed by the CA certificate
 */
public record LeafCertificate(PrivateKey key, X509Certificate[] chain) {
    public LeafCertificate {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(chain, "chain");
        if (chain.length < 1) {
            throw new IllegalArgumentException("chain: empty (expected: the leaf, then the CA)");
        }
        chain = chain.clone();
    }

    /** A copy of the chain: leaf first, then the CA. */
    @Override
    public X509Certificate[] chain() {
        return chain.clone();
    }

    /** The leaf certificate, {@code chain()[0]}. */
    public X509Certificate leaf() {
        return chain[0];
    }

    /** Names the leaf's subject and expiry; never the key. */
    @Override
    public String toString() {
        return "LeafCertificate[subject=" + chain[0].getSubjectX500Principal().getName()
                + ", serial=" + chain[0].getSerialNumber().toString(16)
                + ", notAfter=" + chain[0].getNotAfter().toInstant() + ", key=<hidden>]";
    }
}
