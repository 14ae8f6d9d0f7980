package dev.sallyport.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A per-run test PKI for upstream servers (NOT Sallyport's product CA): a fresh EC P-256 root, and server
 * certificates it issues for DNS names and IP literals. Generated in memory; nothing is committed.
 *
 * <pre>{@code
 * TestPki pki = TestPki.create();
 * TestPki.Issued server = pki.issue("upstream.example.test", "127.0.0.1");
 * try (TlsTestServer upstream = TlsTestServer.start(server.key(), server.chain(), "hello")) { ... }
 * }</pre>
 */
public final class TestPki {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicLong COUNTER = new AtomicLong();

    private final KeyPair rootKeys;
    private final X509Certificate root;

    private TestPki(KeyPair rootKeys, X509Certificate root) {
        this.rootKeys = rootKeys;
        this.root = root;
    }

    /** A fresh root CA named "Sallyport Test Root N", valid from an hour ago for a day. */
    public static TestPki create() {
        KeyPair keys = ecKeys();
        Instant now = Instant.now();
        X500Name name = new X500Name("CN=Sallyport Test Root " + COUNTER.incrementAndGet());
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(),
                    Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), name,
                    keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            ext.createSubjectKeyIdentifier(keys.getPublic()));
            return new TestPki(keys, sign(b, keys.getPrivate()));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot create the test root: " + e, e);
        }
    }

    /** A server certificate (EC P-256 key) for the given DNS names and IP literals, valid now for a day. */
    public Issued issue(String... dnsNamesOrIps) {
        Instant now = Instant.now();
        return issue(now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)), dnsNamesOrIps);
    }

    /** A server certificate with an explicit validity window, e.g. an expired one for failure tests. */
    public Issued issue(Instant notBefore, Instant notAfter, String... dnsNamesOrIps) {
        if (dnsNamesOrIps.length == 0) {
            throw new IllegalArgumentException("dnsNamesOrIps: empty (expected: at least one name)");
        }
        KeyPair keys = ecKeys();
        List<GeneralName> sans = new ArrayList<>();
        for (String n : dnsNamesOrIps) {
            sans.add(isIpLiteral(n) ? new GeneralName(GeneralName.iPAddress, n.replace("[", "").replace("]", ""))
                    : new GeneralName(GeneralName.dNSName, n));
        }
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(root, serial(), Date.from(notBefore),
                    Date.from(notAfter), new X500Name("CN=" + dnsNamesOrIps[0]), keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false,
                            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth,
                                    KeyPurposeId.id_kp_clientAuth}))
                    .addExtension(Extension.subjectAlternativeName, false,
                            new GeneralNames(sans.toArray(GeneralName[]::new)))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            ext.createSubjectKeyIdentifier(keys.getPublic()))
                    .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(root));
            X509Certificate leaf = sign(b, rootKeys.getPrivate());
            return new Issued(keys.getPrivate(), new X509Certificate[] {leaf, root});
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue a test certificate: " + e, e);
        }
    }

    /** Writes the root certificate as PEM to {@code dir/test-root-N.pem} and returns its path. */
    public Path rootPem(Path dir) {
        return write(dir.resolve("test-root-" + root.getSerialNumber().toString(16) + ".pem"), pem(root));
    }

    /** The root certificate, for trust stores. */
    public X509Certificate root() {
        return root;
    }

    /**
     * A server key and its chain ({@code chain[0]} the server certificate, then the root).
     */
    public record Issued(PrivateKey key, X509Certificate[] chain) {
        public Issued {
            Objects.requireNonNull(key, "key");
            chain = chain.clone();
        }

        @Override
        public X509Certificate[] chain() {
            return chain.clone();
        }

        /** Writes the chain as PEM to {@code dir/server-SERIAL.pem} and returns its path. */
        public Path writeCertPem(Path dir) {
            StringBuilder out = new StringBuilder();
            for (X509Certificate c : chain) {
                out.append(pem(c));
            }
            return write(dir.resolve("server-" + chain[0].getSerialNumber().toString(16) + ".pem"), out.toString());
        }

        /** Writes the key as PKCS#8 PEM to {@code dir/server-SERIAL-key.pem} and returns its path. */
        public Path writeKeyPem(Path dir) {
            try {
                return write(dir.resolve("server-" + chain[0].getSerialNumber().toString(16) + "-key.pem"),
                        pem(new JcaPKCS8Generator(key, null).generate()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public String toString() {
            return "Issued[" + chain[0].getSubjectX500Principal().getName() + ", key=<hidden>]";
        }
    }

    /** Whether {@code s} is an IPv4 dotted quad or an IPv6 literal (optionally bracketed). */
    static boolean isIpLiteral(String s) {
        String t = s.replace("[", "").replace("]", "");
        if (t.indexOf(':') >= 0) {
            return true;
        }
        if (!t.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            return false;
        }
        try {
            InetAddress.ofLiteral(t);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static String pem(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(object);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static Path write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            return Files.writeString(file, text, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static KeyPair ecKeys() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static BigInteger serial() {
        return new BigInteger(127, RANDOM).add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key) throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }
}
