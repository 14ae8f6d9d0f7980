package dev.sallyport.sandbox.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Writes what a sandbox trusts, for both backends: a PEM bundle (the proxy CA first, then the system roots) and a
 * PKCS12 trust store for Java (the proxy CA and the JDK's own roots). Both hold certificates only; the store
 * password is public ({@link #P12_PASSWORD}).
 *
 * <p>The system roots are the first readable file of {@link #SYSTEM_BUNDLES}, copied as it is; on a host with none
 * of them, the JDK's roots. The process sandbox binds the bundle over each of {@link #DISTRO_BUNDLES} the host has,
 * the VM backend over each of {@link #SYSTEM_BUNDLES} in the guest, so programs that read their distribution's file
 * without looking at any variable trust the proxy CA too.
 */
public final class TrustFiles {
    /** The PEM bundle's file name. */
    public static final String BUNDLE = "ca-bundle.pem";
    /** The PKCS12 trust store's file name. */
    public static final String P12 = "truststore.p12";
    /** The trust store's password: it protects nothing (public certificates only), Java just wants one. */
    public static final String P12_PASSWORD = "sallyport";
    /** Where distributions keep their CA bundle: Debian, Ubuntu and Alpine; RHEL and Fedora; Alpine, BSDs, LibreSSL. */
    public static final List<Path> SYSTEM_BUNDLES = List.of(Path.of("/etc/ssl/certs/ca-certificates.crt"),
            Path.of("/etc/pki/tls/certs/ca-bundle.crt"), Path.of("/etc/ssl/cert.pem"));
    /**
     * Every path where a distribution keeps the PEM bundle its programs read without being told (Debian, Ubuntu and
     * Alpine; RHEL and Fedora, with what their links lead to; Alpine, BSDs, LibreSSL; openSUSE; Arch): the process
     * sandbox binds its bundle over each one the host has.
     */
    public static final List<Path> DISTRO_BUNDLES = List.of(Path.of("/etc/ssl/certs/ca-certificates.crt"),
            Path.of("/etc/pki/tls/certs/ca-bundle.crt"), Path.of("/etc/pki/tls/cert.pem"),
            Path.of("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
            Path.of("/etc/pki/ca-trust/extracted/openssl/ca-bundle.trust.crt"), Path.of("/etc/ssl/cert.pem"),
            Path.of("/etc/ssl/ca-bundle.pem"), Path.of("/etc/ca-certificates/extracted/tls-ca-bundle.pem"));
    /** Building the PKCS12 store takes a while (PBE and MAC over ~150 roots): keep the last one per CA. */
    private static final ConcurrentHashMap<String, byte[]> P12_CACHE = new ConcurrentHashMap<>();

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
        write(dir, caPem, Optional.empty());
    }

    /**
     * Writes {@link #BUNDLE} and {@link #P12} into {@code dir}; the store comes from {@link StoreCache} in
     * {@code cache} when it holds the one for this CA and these JDK roots (reading the roots is most of the store's
     * cost), and is kept there for the next run otherwise.
     */
    public static void write(Path dir, byte[] caPem, Optional<Path> cache) throws IOException {
        ByteArrayOutputStream bundle = new ByteArrayOutputStream();
        bundle.write(caPem);
        bundle.write('\n');
        bundle.write(systemRoots());
        Files.write(dir.resolve(BUNDLE), bundle.toByteArray());
        String key = HexFormat.of().formatHex(sha256(caPem));
        byte[] store = P12_CACHE.get(key);   // a hit: this CA was parsed when its store was built
        if (store == null) {
            byte[] storeKey = StoreCache.key(caPem, jdkCacerts());
            store = cache.flatMap(c -> StoreCache.read(c, storeKey)).orElse(null);
            if (store == null) {
                store = p12(parse(caPem));
                byte[] built = store;
                cache.ifPresent(c -> StoreCache.write(c, storeKey, built));
            }
            P12_CACHE.clear();
            P12_CACHE.put(key, store);
        }
        Files.write(dir.resolve(P12), store);
    }

    /** The first readable system bundle, else the JDK's roots as PEM. */
    private static byte[] systemRoots() throws IOException {
        for (Path system : SYSTEM_BUNDLES) {
            if (Files.isReadable(system)) {
                return Files.readAllBytes(system);
            }
        }
        StringBuilder pem = new StringBuilder();
        Base64.Encoder base64 = Base64.getMimeEncoder(64, new byte[] {'\n'});
        try {
            for (Certificate root : jdkRoots().values()) {
                pem.append("-----BEGIN CERTIFICATE-----\n").append(base64.encodeToString(root.getEncoded()))
                        .append("\n-----END CERTIFICATE-----\n");
            }
        } catch (CertificateEncodingException e) {
            throw new IOException("trust bundle: cannot encode a JDK root: " + e.getMessage(), e);
        }
        return pem.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** The certificates of the JDK's {@code cacerts} by alias; empty when it cannot be read. */
    private static Map<String, Certificate> jdkRoots() throws IOException {
        Path cacerts = jdkCacerts();
        if (!Files.isReadable(cacerts)) {
            return Map.of();
        }
        try {
            KeyStore system = KeyStore.getInstance(cacerts.toFile(), (char[]) null);
            Map<String, Certificate> roots = new LinkedHashMap<>();
            for (String alias : Collections.list(system.aliases())) {
                Certificate c = system.getCertificate(alias);
                if (c != null) {
                    roots.put(alias, c);
                }
            }
            return roots;
        } catch (GeneralSecurityException e) {
            throw new IOException("trust store: cannot read " + cacerts + ": " + e.getMessage(), e);
        }
    }

    /** The JDK's {@code cacerts}, whose certificates {@link #P12} holds beside the proxy CA. */
    static Path jdkCacerts() {
        return Path.of(System.getProperty("java.home"), "lib", "security", "cacerts");
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256: not available", e);
        }
    }

    /**
     * Writes the store without password-based protection (JDK 18+: no PBE of the certificates, no MAC): the password
     * is public, so they protect nothing, and they were most of the store's cost (about 65 of 80 ms of a run's start
     * here). Readers that pass the password still load it. The properties are the JDK's; set only while storing.
     */
    private static final String[] P12_PROTECTION = {"keystore.pkcs12.certProtectionAlgorithm",
        "keystore.pkcs12.macAlgorithm"};

    private static byte[] p12(List<X509Certificate> ca) throws IOException {
        synchronized (P12_PROTECTION) {
            String[] was = new String[P12_PROTECTION.length];
            for (int i = 0; i < was.length; i++) {
                was[i] = System.setProperty(P12_PROTECTION[i], "NONE");
            }
            try {
                return p12Unprotected(ca);
            } finally {
                for (int i = 0; i < was.length; i++) {
                    if (was[i] == null) {
                        System.clearProperty(P12_PROTECTION[i]);
                    } else {
                        System.setProperty(P12_PROTECTION[i], was[i]);
                    }
                }
            }
        }
    }

    private static byte[] p12Unprotected(List<X509Certificate> ca) throws IOException {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            for (int i = 0; i < ca.size(); i++) {
                store.setCertificateEntry("sallyport-ca-" + i, ca.get(i));
            }
            for (Map.Entry<String, Certificate> root : jdkRoots().entrySet()) {
                store.setCertificateEntry("system-" + root.getKey(), root.getValue());
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            store.store(out, P12_PASSWORD.toCharArray());
            return out.toByteArray();
        } catch (GeneralSecurityException e) {
            throw new IOException("trust store: cannot build PKCS12: " + e.getMessage(), e);
        }
    }
}
