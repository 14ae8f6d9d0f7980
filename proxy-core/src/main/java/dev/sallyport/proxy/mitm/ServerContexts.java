package dev.sallyport.proxy.mitm;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sallyport.ca.LeafCertificate;
import dev.sallyport.proxy.internal.Transports;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import java.net.Socket;
import java.security.Principal;
import java.time.Duration;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The one server TLS context of intercepted tunnels. It presents, per handshake, the minted leaf of the
 * tunnel's CONNECT target: the handler for a tunnel is created with that target as the engine's peer host
 * ({@link InterceptSniHandler}), and the key manager looks the leaf up by it. One context for every host means
 * a new host costs a signature, not a TLS context (building one cost about 10 ms of CPU per host). ALPN offers
 * {@code http/1.1}, and {@code h2} before it where {@code proxy.http2} is on: two contexts, the leaves shared.
 */
public final class ServerContexts {

    /**
     * BoringSSL's parsed leaves kept by Netty, by alias. When full, Netty walks every alias to drop those the key
     * manager no longer answers for (hosts unused for {@link #LIVE}) before caching another, and caches nothing
     * when none is stale: small, so that walk stays cheap (at 1,024 it was half of a new host's event-loop time).
     */
    private static final int NATIVE_CACHED = 256;
    /** How long after its last handshake the key manager still answers for a host's leaf. */
    private static final Duration LIVE = Duration.ofSeconds(60);
    /** A bound on hosts live at once; far above what the minter signs in {@link #LIVE}. */
    private static final int MAX_LIVE = 50_000;

    /** The leaf handed to a handshake that is about to start, and its alias, by CONNECT target. */
    private record Presented(LeafCertificate leaf, String alias) {}

    // expiry by access, not a size bound alone: a size-bound cache may refuse a brand-new entry in favour of
    // frequent ones, and the handshake that needs it would then find no leaf
    private final Cache<String, Presented> leaves = Caffeine.newBuilder().expireAfterAccess(LIVE)
            .maximumSize(MAX_LIVE).build();
    private final SslContext shared;
    private final SslContext sharedWithH2;

    public ServerContexts() {
        shared = build(ApplicationProtocolNames.HTTP_1_1);
        sharedWithH2 = build(ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1);
    }

    private SslContext build(String... protocols) {
        try {
            SslContextBuilder builder = Transports.sslProvider() == SslProvider.OPENSSL
                    // BoringSSL's parsed form of a leaf, kept per alias (host and serial) instead of being encoded
                    // and parsed again on every handshake; bounded, later leaves go uncached
                    ? SslContextBuilder.forServer(new OpenSslCachingX509KeyManagerFactory(
                            new KeyManagerFactoryWrapper(new LeafKeyManager()), NATIVE_CACHED))
                    : SslContextBuilder.forServer(new LeafKeyManager());
            return builder.sslProvider(Transports.sslProvider())
                    .protocols("TLSv1.3", "TLSv1.2")
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            protocols))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("server TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * Records {@code leaf} as the certificate for handshakes whose engine names {@code host}; the shared context,
     * offering {@code h2} when {@code http2}.
     */
    SslContext forLeaf(String host, LeafCertificate leaf, boolean http2) {
        Presented now = leaves.getIfPresent(host);
        if (now == null || now.leaf() != leaf) {
            leaves.put(host, new Presented(leaf, host + ALIAS_SEPARATOR + leaf.leaf().getSerialNumber().toString(16)));
        }
        return http2 ? sharedWithH2 : shared;
    }

    private static final String ALIAS_SEPARATOR = "#";

    /**
     * Chooses the leaf by the engine's peer host, which {@link InterceptSniHandler} sets to the CONNECT target. The
     * alias is the host and the leaf's serial, so a re-minted leaf never meets the cached form of an older one.
     */
    private final class LeafKeyManager extends X509ExtendedKeyManager {

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            String host = engine == null ? null : engine.getPeerHost();
            Presented presented = host == null ? null : leaves.getIfPresent(host);
            return presented != null && fits(keyType, presented.leaf().key()) ? presented.alias() : null;
        }

        /**
         * The leaf an alias names, or null when the host's leaf has changed or was dropped since. Looked up
         * quietly: Netty asks for every cached alias when its cache is full, and that must not keep them live.
         */
        private LeafCertificate leafFor(String alias) {
            int at = alias == null ? -1 : alias.lastIndexOf(ALIAS_SEPARATOR);
            Presented presented = at < 0 ? null : leaves.policy().getIfPresentQuietly(alias.substring(0, at));
            return presented != null && presented.alias().equals(alias) ? presented.leaf() : null;
        }

        /** Key types come as "EC", "RSA", or OpenSSL's "EC_EC"-style pairs; the key's own family must lead. */
        private static boolean fits(String keyType, PrivateKey key) {
            String family = key.getAlgorithm().startsWith("EC") ? "EC" : key.getAlgorithm();
            return keyType != null && (keyType.equals(family) || keyType.startsWith(family + "_"));
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            LeafCertificate leaf = leafFor(alias);
            return leaf == null ? null : leaf.chain();
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            LeafCertificate leaf = leafFor(alias);
            return leaf == null ? null : leaf.key();
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null; // engines only: the tunnel's target comes from the engine
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }
    }
}
