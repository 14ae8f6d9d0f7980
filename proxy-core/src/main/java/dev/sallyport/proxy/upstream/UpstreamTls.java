package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.UpstreamSettings;
import dev.sallyport.proxy.internal.Transports;
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
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The client TLS context for upstream connections: the roots from {@code upstream.trust} (system roots and PEM
 * files) and hostname verification (HTTPS endpoint identification). There is no switch that turns it off.
 */
public final class UpstreamTls {

    private UpstreamTls() {}

    public static SslContext context(UpstreamSettings settings) throws IOException, GeneralSecurityException {
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
        return SslContextBuilder.forClient()
                .sslProvider(Transports.sslProvider())
                .trustManager(roots)
                .endpointIdentificationAlgorithm("HTTPS")
                .protocols("TLSv1.3", "TLSv1.2")
                .build();
    }
}
