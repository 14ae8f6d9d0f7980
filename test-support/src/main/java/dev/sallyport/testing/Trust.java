package dev.sallyport.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Client-side TLS that trusts only what a test gives it: one PEM file (the proxy's CA, the test PKI's root), some
 * certificates, or a trust store. {@link #context} goes to the JDK client and sockets, {@link #manager} to OkHttp.
 *
 * <pre>{@code
 * Trust trust = Trust.of(proxy.caPem);
 * HttpClient client = HttpClient.newBuilder().sslContext(trust.context).build();
 * }</pre>
 */
public final class Trust {

    public final SSLContext context;
    public final X509TrustManager manager;

    private Trust(SSLContext context, X509TrustManager manager) {
        this.context = context;
        this.manager = manager;
    }

    /** Trusts the one certificate in the PEM file {@code pem}. */
    public static Trust of(Path pem) {
        try (InputStream in = Files.newInputStream(pem)) {
            return of((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pem, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(pem + ": not a PEM certificate: " + e, e);
        }
    }

    /** Trusts {@code anchors}, nothing else. */
    public static Trust of(X509Certificate... anchors) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            for (int i = 0; i < anchors.length; i++) {
                store.setCertificateEntry("anchor-" + i, anchors[i]);
            }
            return of(store);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot build a trust store: " + e, e);
        }
    }

    /** Trusts the certificate entries of {@code store}, nothing else. */
    public static Trust of(KeyStore store) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return new Trust(context, (X509TrustManager) tmf.getTrustManagers()[0]);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot build the client's TLS context: " + e, e);
        }
    }
}
