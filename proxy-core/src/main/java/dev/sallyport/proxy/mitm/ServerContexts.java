package dev.sallyport.proxy.mitm;

import dev.sallyport.ca.LeafCertificate;
import dev.sallyport.proxy.internal.Transports;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLException;

/**
 * Server TLS contexts for minted leaves, one per leaf (the minter caches leaves, this caches the contexts
 * built from them). ALPN offers only {@code http/1.1}.
 */
public final class ServerContexts {

    private static final int MAX = 4096;

    private record Entry(LeafCertificate leaf, SslContext context) {}

    private final Map<String, Entry> byHost = new ConcurrentHashMap<>();

    SslContext forLeaf(String host, LeafCertificate leaf) throws SSLException {
        Entry entry = byHost.get(host);
        if (entry != null && entry.leaf() == leaf) {
            return entry.context();
        }
        SslContext context = SslContextBuilder.forServer(leaf.key(), leaf.chain())
                // Netty puts key and chain in a transient in-memory key store; the default PKCS#12 type protects
                // the key with PBKDF2 on the way in and out, about half of a new host's CPU. JKS does not.
                .keyStoreType("JKS")
                .sslProvider(Transports.sslProvider())
                .protocols("TLSv1.3", "TLSv1.2")
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
        if (byHost.size() >= MAX) {
            byHost.clear();
        }
        byHost.put(host, new Entry(leaf, context));
        return context;
    }
}
