package dev.sallyport.proxy.mitm;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sallyport.ca.LeafCertificate;
import dev.sallyport.proxy.internal.Transports;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.Socket;
import java.security.Principal;
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
 * only {@code http/1.1}.
 */
public final class ServerContexts {

    private static final int MAX = 4096;

    /** Leaves handed to a handshake that is about to start, by CONNECT target. */
    private final Cache<String, LeafCertificate> leaves = Caffeine.newBuilder().maximumSize(MAX).build();
    private final SslContext shared;

    public ServerContexts() {
        try {
            shared = SslContextBuilder.forServer(new LeafKeyManager())
                    .sslProvider(Transports.sslProvider())
                    .protocols("TLSv1.3", "TLSv1.2")
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_1_1))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("server TLS context: " + e.getMessage(), e);
        }
    }

    /** Records {@code leaf} as the certificate for handshakes whose engine names {@code host}; the shared context. */
    SslContext forLeaf(String host, LeafCertificate leaf) {
        leaves.put(host, leaf);
        return shared;
    }

    /** Chooses the leaf by the engine's peer host, which {@link InterceptSniHandler} sets to the CONNECT target. */
    private final class LeafKeyManager extends X509ExtendedKeyManager {

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            String host = engine == null ? null : engine.getPeerHost();
            LeafCertificate leaf = host == null ? null : leaves.getIfPresent(host);
            return leaf != null && fits(keyType, leaf.key()) ? host : null;
        }

        /** Key types come as "EC", "RSA", or OpenSSL's "EC_EC"-style pairs; the key's own family must lead. */
        private static boolean fits(String keyType, PrivateKey key) {
            String family = key.getAlgorithm().startsWith("EC") ? "EC" : key.getAlgorithm();
            return keyType != null && (keyType.equals(family) || keyType.startsWith(family + "_"));
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            LeafCertificate leaf = leaves.getIfPresent(alias);
            return leaf == null ? null : leaf.chain();
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            LeafCertificate leaf = leaves.getIfPresent(alias);
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
