package dev.sallyport.sandbox.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Writes what the sandbox trusts: a PEM bundle (the proxy CA first, then the system roots) and the same as a
 * PKCS12 trust store for Java. Both hold certificates only; the store password is public ({@link #P12_PASSWORD}).
 */
public final class TrustFiles {
    public static final String BUNDLE = "ca-bundle.pem";
    public static final String P12 = "truststore.p12";
    public static final String P12_PASSWORD = "sallyport";
    /** Building the PKCS12 store takes a while (PBE and MAC over ~150 roots): keep the last one per CA. */
    private static final java.util.concurrent.ConcurrentHashMap<String, byte[]> P12_CACHE =
            new java.util.concurrent.ConcurrentHashMap<>();
    static final List<Path> SYSTEM_BUNDLES = List.of(Path.of("/etc/ssl/certs/ca-certificates.crt"),
            Path.of("/etc/pki/tls/certs/ca-bundle.crt"), Path.of("/etc/ssl/cert.pem"));

    private TrustFiles() {
    }

    /** Parses the CA PEM; fails when it holds no certificate. */
    public static List<X509Certificate> parse(byte[] caPem) throws IOException {
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(caPem))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IOException("caPem: no certificate (expected: the proxy CA certificate as PEM)");
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new IOException("caPem: not a certificate: " + e.getMessage() + " (expected: PEM)", e);
        }
    }

    /** Writes {@link #BUNDLE} and {@link #P12} into {@code dir}. */
    public static void write(Path dir, byte[] caPem) throws IOException {
        List<X509Certificate> ca = parse(caPem);
        ByteArrayOutputStream bundle = new ByteArrayOutputStream();
        bundle.write(caPem);
        bundle.write('\n');
        for (Path system : SYSTEM_BUNDLES) {
            if (Files.isReadable(system)) {
                bundle.write(Files.readAllBytes(system));
                break;
            }
        }
        Files.write(dir.resolve(BUNDLE), bundle.toByteArray());
        String key = java.util.HexFormat.of().formatHex(sha256(caPem));
        byte[] store = P12_CACHE.get(key);
        if (store == null) {
            store = p12(ca);
            P12_CACHE.clear();
            P12_CACHE.put(key, store);
        }
        Files.write(dir.resolve(P12), store);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256: not available", e);
        }
    }

    private static byte[] p12(List<X509Certificate> ca) throws IOException {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            for (int i = 0; i < ca.size(); i++) {
                store.setCertificateEntry("sallyport-ca-" + i, ca.get(i));
            }
            Path cacerts = Path.of(System.getProperty("java.home"), "lib", "security", "cacerts");
            if (Files.isReadable(cacerts)) {
                KeyStore system = KeyStore.getInstance(cacerts.toFile(), (char[]) null);
                for (String alias : Collections.list(system.aliases())) {
                    Certificate c = system.getCertificate(alias);
                    if (c != null) {
                        store.setCertificateEntry("system-" + alias, c);
                    }
                }
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            store.store(out, P12_PASSWORD.toCharArray());
            return out.toByteArray();
        } catch (GeneralSecurityException e) {
            throw new IOException("trust store: cannot build PKCS12: " + e.getMessage(), e);
        }
    }
}
