package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.UpstreamSettings;
import dev.sallyport.proxy.internal.Transports;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The client TLS contexts for upstream connections: the roots from {@code upstream.trust} (system roots and PEM
 * files) and hostname verification (HTTPS endpoint identification), by the JDK's PKIX trust manager with
 * accepted chains remembered for a while ({@link RememberingTrustManager}). There is no switch that turns it off.
 * Two contexts share that trust: one offers {@code http/1.1} in ALPN, the other {@code h2} and {@code http/1.1}, for
 * exchanges whose client speaks HTTP/2 (and for a server that refused {@code http/1.1}).
 */
public final class UpstreamTls {

    private final SslContext http1;
    private final SslContext alpn;

    private UpstreamTls(SslContext http1, SslContext alpn) {
        this.http1 = http1;
        this.alpn = alpn;
    }

    /** The context that offers {@code http/1.1} alone. */
    public SslContext http1() {
        return http1;
    }

    /** The context that offers {@code h2} and {@code http/1.1}. */
    public SslContext alpn() {
        return alpn;
    }

    public static UpstreamTls context(UpstreamSettings settings) throws IOException, GeneralSecurityException {
        List<X509Certificate> roots = new ArrayList<>();
        if (settings.systemTrust()) {
            TrustManagerFactory system = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            system.init((KeyStore) null);
            for (var tm : system.getTrustManagers()) {
                if (tm instanceof X509TrustManager x509) {
                    roots.addAll(List.of(x509.getAcceptedIssuers()));
                }
            }
        }
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        for (Path file : settings.trustFiles()) {
            try (InputStream in = Files.newInputStream(file)) {
                for (var cert : factory.generateCertificates(in)) {
                    roots.add((X509Certificate) cert);
                }
            }
            if (roots.isEmpty()) {
                throw new IOException(file + ": no certificate found (expected: PEM certificates)");
            }
        }
        if (roots.isEmpty()) {
            throw new IOException("upstream.trust: no trusted roots (expected: system or PEM files)");
        }
        KeyStore anchors = KeyStore.getInstance(KeyStore.getDefaultType());
        anchors.load(null, null);
        for (int i = 0; i < roots.size(); i++) {
            anchors.setCertificateEntry("root-" + i, roots.get(i));
        }
        TrustManagerFactory pkix = TrustManagerFactory.getInstance("PKIX");
        pkix.init(anchors);
        X509ExtendedTrustManager jdk = null;
        for (var tm : pkix.getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager extended) {
                jdk = extended;
            }
        }
        if (jdk == null) {
            throw new GeneralSecurityException("the JDK's PKIX trust manager is missing");
        }
        RememberingTrustManager trust = new RememberingTrustManager(jdk, InstantSource.system(), System::nanoTime);
        return new UpstreamTls(builder(trust, ApplicationProtocolNames.HTTP_1_1).build(),
                builder(trust, ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1).build());
    }

    private static SslContextBuilder builder(RememberingTrustManager trust, String... protocols) {
        return SslContextBuilder.forClient()
                .sslProvider(Transports.sslProvider())
                .trustManager(trust)
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, protocols))
                .endpointIdentificationAlgorithm("HTTPS")
                .protocols("TLSv1.3", "TLSv1.2");
    }
}
