package dev.sallyport.proxy.testing;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** Client trust that holds only one PEM certificate (the proxy's CA, or the test PKI root). */
public final class Trust {

    public final SSLContext context;
    public final X509TrustManager manager;

    private Trust(SSLContext context, X509TrustManager manager) {
        this.context = context;
        this.manager = manager;
    }

    public static Trust of(Path pem) throws Exception {
        X509Certificate cert;
        try (InputStream in = Files.newInputStream(pem)) {
            cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("ca", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return new Trust(context, (X509TrustManager) tmf.getTrustManagers()[0]);
    }
}
