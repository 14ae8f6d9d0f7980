package dev.sallyport.ca;

import dev.sallyport.ca.internal.Pem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports a CA certificate for clients to trust: PEM, DER or a PKCS#12 trust store. With {@code bundle} the
 * system roots ({@link #systemRoots()}) follow the CA, giving one file a client can use as its whole trust store
 * (the sandbox's clients must still reach hosts the proxy passes through untouched). Never exports the key.
 */
public final class CaExport {
    /** The Debian/Ubuntu system bundle that curl, OpenSSL, Python and Node read by default. */
    public static final Path SYSTEM_BUNDLE = Path.of("/etc/ssl/certs/ca-certificates.crt");
    /** The alias of the CA's entry in {@link #p12}. */
    public static final String P12_ALIAS = "sallyport-ca";

    private static final Logger LOGGER = LoggerFactory.getLogger(CaExport.class);

    private CaExport() {
    }

    /**
     * Reads a CA certificate for export, without its key (exporting needs no access to the key): the first
     * certificate in a PEM file, which must be a CA certificate.
     */
    public static X509Certificate readCertificate(Path certPem) throws CaException {
        return CertificateAuthority.readCaCertificate(certPem);
    }

    /** The CA certificate as PEM; with {@code bundle}, followed by every system root (duplicates of the CA dropped). */
    public static byte[] pem(CertificateAuthority ca, boolean bundle) {
        return pem(ca.certificate(), bundle);
    }

    /** {@link #pem(CertificateAuthority, boolean)} for a CA certificate read by {@link #readCertificate}. */
    public static byte[] pem(X509Certificate caCert, boolean bundle) {
        StringBuilder out = new StringBuilder();
        for (X509Certificate cert : certificates(caCert, bundle)) {
            out.append(Pem.certificate(cert));
        }
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** The CA certificate in DER form (one certificate; DER cannot hold a bundle). */
    public static byte[] der(CertificateAuthority ca) {
        return der(ca.certificate());
    }

    /** {@link #der(CertificateAuthority)} for a CA certificate read by {@link #readCertificate}. */
    public static byte[] der(X509Certificate caCert) {
        try {
            return caCert.getEncoded();
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode the CA certificate: " + Pem.oneLine(e), e);
        }
    }

    /**
     * A PKCS#12 trust store holding the CA as a trusted certificate entry (alias {@value #P12_ALIAS}); with
     * {@code bundle} also every system root (aliases {@code root-1}, {@code root-2}, ...). No private keys.
     */
    public static byte[] p12(CertificateAuthority ca, char[] password, boolean bundle) {
        return p12(ca.certificate(), password, bundle);
    }

    /** {@link #p12(CertificateAuthority, char[], boolean)} for a CA certificate read by {@link #readCertificate}. */
    public static byte[] p12(X509Certificate caCert, char[] password, boolean bundle) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            List<X509Certificate> certs = certificates(caCert, bundle);
            store.setCertificateEntry(P12_ALIAS, certs.getFirst());
            for (int i = 1; i < certs.size(); i++) {
                store.setCertificateEntry("root-" + i, certs.get(i));
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            store.store(out, password);
            return out.toByteArray();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build the PKCS#12 trust store: " + Pem.oneLine(e), e);
        }
    }

    /**
     * The system's trusted roots: the certificates in {@link #SYSTEM_BUNDLE} when that file exists and holds any
     * (what the sandbox's non-Java clients trust by default), otherwise the accepted issuers of the JDK's default
     * trust manager (its {@code cacerts}). Empty only if neither yields any.
     */
    public static List<X509Certificate> systemRoots() {
        if (Files.isRegularFile(SYSTEM_BUNDLE)) {
            try {
                List<X509Certificate> roots = Pem.readCertificates(
                        Files.readString(SYSTEM_BUNDLE, StandardCharsets.ISO_8859_1));
                if (!roots.isEmpty()) {
                    return List.copyOf(roots);
                }
            } catch (IOException | IllegalArgumentException e) {
                LOGGER.warn("cannot read system CA bundle, using the JDK trust store path={} reason={}",
                        SYSTEM_BUNDLE, Pem.oneLine(e));
            }
        }
        return jdkRoots();
    }

    static List<X509Certificate> jdkRoots() {
        try {
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init((KeyStore) null);
            List<X509Certificate> out = new ArrayList<>();
            for (var manager : factory.getTrustManagers()) {
                if (manager instanceof X509TrustManager x509) {
                    out.addAll(List.of(x509.getAcceptedIssuers()));
                }
            }
            return List.copyOf(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the JDK trust store: " + Pem.oneLine(e), e);
        }
    }

    private static List<X509Certificate> certificates(X509Certificate caCert, boolean bundle) {
        Map<X509Certificate, Boolean> unique = new LinkedHashMap<>();
        unique.put(caCert, true);
        if (bundle) {
            for (X509Certificate root : systemRoots()) {
                unique.putIfAbsent(root, true);
            }
        }
        return List.copyOf(unique.keySet());
    }
}
