package dev.sallyport.ca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.ca.internal.Pem;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.openssl.PKCS8Generator;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CertificateAuthorityTest {
    @TempDir
    Path tmp;

    @Test
    void initCreatesFolder0700AndKey0600() throws Exception {
        Path dir = tmp.resolve("state/ca");
        CertificateAuthority.init(dir, "Test CA", KeyType.EC_P256, 30);

        assertThat(Files.getPosixFilePermissions(dir)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.getPosixFilePermissions(dir.resolve("ca-key.pem")))
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readString(dir.resolve("ca-key.pem"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve("ca.pem"))).startsWith("-----BEGIN CERTIFICATE-----");
    }

    @Test
    void caCertificateHasCaExtensionsAndRandomSerial() throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        X509Certificate cert = ca.certificate();

        assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=Test CA");
        assertThat(cert.getBasicConstraints()).isZero(); // CA:true, pathLen 0
        assertThat(cert.getCriticalExtensionOIDs()).contains(Extension.basicConstraints.getId(),
                Extension.keyUsage.getId());
        boolean[] ku = cert.getKeyUsage();
        assertThat(ku[5]).as("keyCertSign").isTrue();
        assertThat(ku[6]).as("cRLSign").isTrue();
        assertThat(ku[0]).as("digitalSignature").isFalse();
        byte[] ski = SubjectKeyIdentifier.getInstance(ASN1OctetString.getInstance(
                cert.getExtensionValue(Extension.subjectKeyIdentifier.getId())).getOctets()).getKeyIdentifier();
        byte[] aki = AuthorityKeyIdentifier.getInstance(ASN1OctetString.getInstance(
                cert.getExtensionValue(Extension.authorityKeyIdentifier.getId())).getOctets()).getKeyIdentifierOctets();
        assertThat(aki).isEqualTo(ski);
        assertThat(cert.getSerialNumber().signum()).isPositive();
        assertThat(cert.getSerialNumber().bitLength()).isBetween(64, 128);
        assertThat(cert.getSigAlgName()).isEqualTo("SHA256withECDSA");
        cert.verify(cert.getPublicKey());
        assertThat(Duration.between(cert.getNotBefore().toInstant(), cert.getNotAfter().toInstant()))
                .isEqualTo(Duration.ofDays(30).plusHours(1));
        CertificateAuthority other = CertificateAuthority.ephemeral("Test CA");
        assertThat(other.certificate().getSerialNumber()).isNotEqualTo(cert.getSerialNumber());
    }

    @Test
    void initRefusesToOverwriteAnExistingCa() throws Exception {
        CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        byte[] key = Files.readAllBytes(tmp.resolve("ca-key.pem"));
        byte[] cert = Files.readAllBytes(tmp.resolve("ca.pem"));

        assertThatThrownBy(() -> CertificateAuthority.init(tmp, "Other", KeyType.RSA_2048, 30))
                .isInstanceOf(CaException.class)
                .hasMessageContaining(tmp.resolve("ca-key.pem").toString())
                .hasMessageContaining("refusing to overwrite")
                .hasMessageNotContaining("\n");
        assertThat(Files.readAllBytes(tmp.resolve("ca-key.pem"))).isEqualTo(key);
        assertThat(Files.readAllBytes(tmp.resolve("ca.pem"))).isEqualTo(cert);
    }

    @Test
    void initRefusesWhenOnlyOneOfTheFilesExists() throws Exception {
        Files.writeString(tmp.resolve("ca.pem"), "someone else's certificate");
        assertThatThrownBy(() -> CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30))
                .isInstanceOf(CaException.class).hasMessageContaining(tmp.resolve("ca.pem").toString());
        assertThat(tmp.resolve("ca-key.pem")).doesNotExist();
        assertThat(Files.readString(tmp.resolve("ca.pem"))).isEqualTo("someone else's certificate");

        Path other = tmp.resolve("other");
        Files.createDirectory(other);
        Files.writeString(other.resolve("ca-key.pem"), "someone else's key");
        assertThatThrownBy(() -> CertificateAuthority.init(other, "Test CA", KeyType.EC_P256, 30))
                .isInstanceOf(CaException.class).hasMessageContaining(other.resolve("ca-key.pem").toString());
        assertThat(Files.readString(other.resolve("ca-key.pem"))).isEqualTo("someone else's key");
        assertThat(other.resolve("ca.pem")).doesNotExist();
    }

    @Test
    void initRejectsBadArguments() {
        assertThatThrownBy(() -> CertificateAuthority.init(tmp, "", KeyType.EC_P256, 30))
                .hasMessage("name: '' (expected: 1 to 64 printable characters)");
        assertThatThrownBy(() -> CertificateAuthority.init(tmp, "x", KeyType.EC_P256, 0))
                .hasMessage("days: 0 (expected: 1 to 36500)");
        assertThat(tmp.resolve("ca-key.pem")).doesNotExist();
    }

    @Test
    void initReportsAFolderThatCannotBeCreated() throws Exception {
        Path file = Files.writeString(tmp.resolve("not-a-folder"), "x");
        assertOneLineError(() -> CertificateAuthority.init(file.resolve("ca"), "T", KeyType.EC_P256, 5),
                "CA folder " + file.resolve("ca") + ": cannot create");
    }

    @ParameterizedTest
    @EnumSource(KeyType.class)
    void everyKeyTypeRoundTripsThroughTheFiles(KeyType type) throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(tmp, "Test " + type.id(), type, 30);
        CertificateAuthority loaded = CertificateAuthority.load(tmp.resolve("ca.pem"), tmp.resolve("ca-key.pem"));

        assertThat(loaded.certificate()).isEqualTo(ca.certificate());
        assertThat(loaded.keyType()).isEqualTo(type);
        assertThat(loaded.certificate().getPublicKey().getAlgorithm()).isEqualTo(type.algorithm());
        assertThat(loaded.certificate().getSigAlgName())
                .isEqualTo(type == KeyType.EC_P256 ? "SHA256withECDSA" : "SHA256withRSA");
        assertThat(loaded.privateKey().getEncoded()).isEqualTo(ca.privateKey().getEncoded());
    }

    @Test
    void keyTypeParsesTheCommandLineSpelling() {
        assertThat(KeyType.parse("ec-p256")).isEqualTo(KeyType.EC_P256);
        assertThat(KeyType.parse("RSA-4096")).isEqualTo(KeyType.RSA_4096);
        assertThatThrownBy(() -> KeyType.parse("dsa"))
                .hasMessage("key type 'dsa' is not supported (expected: ec-p256, rsa-2048 or rsa-4096)");
    }

    @Test
    void loadReportsMissingFiles() throws Exception {
        CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        Path missing = tmp.resolve("nope.pem");
        assertOneLineError(() -> CertificateAuthority.load(missing, tmp.resolve("ca-key.pem")),
                "CA certificate " + missing + ": file not found");
        assertOneLineError(() -> CertificateAuthority.load(tmp.resolve("ca.pem"), missing),
                "CA key " + missing + ": file not found");
    }

    @Test
    void loadReportsWrongPemContent() throws Exception {
        CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        Path cert = tmp.resolve("ca.pem");
        Path key = tmp.resolve("ca-key.pem");
        Path garbage = Files.writeString(tmp.resolve("garbage.pem"), "hello\nworld\n");
        Path corrupt = Files.writeString(tmp.resolve("corrupt.pem"),
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");

        assertOneLineError(() -> CertificateAuthority.load(garbage, key),
                "CA certificate " + garbage + ": no PEM certificate found");
        assertOneLineError(() -> CertificateAuthority.load(key, key), "CA certificate " + key + ": no PEM certificate");
        assertOneLineError(() -> CertificateAuthority.load(corrupt, key), "CA certificate " + corrupt + ": corrupt");
        assertOneLineError(() -> CertificateAuthority.load(cert, cert), "CA key " + cert + ": no private key found");
        assertOneLineError(() -> CertificateAuthority.load(cert, tmp), "CA key " + tmp + ": is a directory");
    }

    @Test
    void loadRejectsEncryptedKeys() throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        var encryptor = new JceOpenSSLPKCS8EncryptorBuilder(PKCS8Generator.AES_256_CBC)
                .setProvider(new org.bouncycastle.jce.provider.BouncyCastleProvider())
                .setPassword("pw".toCharArray()).build();
        Path encrypted = Files.writeString(tmp.resolve("enc.pem"),
                pemOf(new JcaPKCS8Generator(ca.privateKey(), encryptor).generate()));

        assertOneLineError(() -> CertificateAuthority.load(tmp.resolve("ca.pem"), encrypted),
                "CA key " + encrypted + ": encrypted private keys are not supported");
    }

    @Test
    void loadRejectsAKeyOfAnotherCa() throws Exception {
        CertificateAuthority.init(tmp.resolve("a"), "A", KeyType.EC_P256, 30);
        CertificateAuthority.init(tmp.resolve("b"), "B", KeyType.EC_P256, 30);
        CertificateAuthority.init(tmp.resolve("r"), "R", KeyType.RSA_2048, 30);
        Path cert = tmp.resolve("a/ca.pem");

        assertOneLineError(() -> CertificateAuthority.load(cert, tmp.resolve("b/ca-key.pem")),
                "CA key " + tmp.resolve("b/ca-key.pem") + ": does not match the certificate " + cert);
        assertOneLineError(() -> CertificateAuthority.load(cert, tmp.resolve("r/ca-key.pem")),
                "does not match the certificate");
    }

    @Test
    void loadRejectsACertificateThatIsNotACa() throws Exception {
        TestPki.Issued server = TestPki.create().issue("server.example.test");
        Path cert = server.writeCertPem(tmp);
        Path key = server.writeKeyPem(tmp);

        assertOneLineError(() -> CertificateAuthority.load(cert, key), "is not a CA certificate");
    }

    @Test
    void loadRejectsAnExpiredOrNotYetValidCa() throws Exception {
        CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 10);
        Instant later = Instant.now().plus(Duration.ofDays(11));
        Instant earlier = Instant.now().minus(Duration.ofDays(1));

        assertOneLineError(() -> CertificateAuthority.load(tmp.resolve("ca.pem"), tmp.resolve("ca-key.pem"),
                InstantSource.fixed(later)), "expired on");
        assertOneLineError(() -> CertificateAuthority.load(tmp.resolve("ca.pem"), tmp.resolve("ca-key.pem"),
                InstantSource.fixed(earlier)), "not valid before");
    }

    @Test
    void loadAcceptsTraditionalKeyFormatsAsOpensslWritesThem() throws Exception {
        // SEC1 "EC PRIVATE KEY" and PKCS#1 "RSA PRIVATE KEY", converted by the real openssl
        for (KeyType type : List.of(KeyType.EC_P256, KeyType.RSA_2048)) {
            Path dir = tmp.resolve(type.id());
            CertificateAuthority ca = CertificateAuthority.init(dir, "T", type, 5);
            Path traditional = dir.resolve("trad.pem");
            ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), List.of("openssl", "pkey",
                    "-in", dir.resolve("ca-key.pem").toString(), "-traditional", "-out", traditional.toString()), null);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(Files.readString(traditional)).contains(type == KeyType.EC_P256 ? "EC PRIVATE" : "RSA PRIVATE");
            assertThat(CertificateAuthority.load(dir.resolve("ca.pem"), traditional).certificate())
                    .isEqualTo(ca.certificate());
        }
    }

    @Test
    void loadOrInitCreatesOnceThenLoads() throws Exception {
        Path dir = tmp.resolve("state");
        CertificateAuthority first = CertificateAuthority.loadOrInit(dir);
        CertificateAuthority second = CertificateAuthority.loadOrInit(dir);

        assertThat(first.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=Sallyport Local CA");
        assertThat(first.keyType()).isEqualTo(KeyType.EC_P256);
        assertThat(second.certificate()).isEqualTo(first.certificate());

        Files.delete(dir.resolve("ca-key.pem"));
        assertOneLineError(() -> CertificateAuthority.loadOrInit(dir), "found ca.pem but not ca-key.pem");
    }

    @Test
    void ephemeralCaWritesNoFiles() throws Exception {
        Path cwd = Path.of("").toAbsolutePath();
        Path tmpdir = Path.of(System.getProperty("java.io.tmpdir"));
        Set<Path> before = listing(cwd, tmpdir);

        CertificateAuthority ca = CertificateAuthority.ephemeral("Sandbox run CA");
        try (LeafMinter minter = new LeafMinter(ca, Runnable::run, InstantSource.system(), MintListener.NONE)) {
            minter.mint("api.example.test").join();
        }

        assertThat(ca.isEphemeral()).isTrue();
        assertThat(ca.certificate().getBasicConstraints()).isZero();
        String keyBase64 = Base64.getEncoder().encodeToString(ca.privateKey().getEncoded()).substring(0, 40);
        Set<Path> created = listing(cwd, tmpdir);
        created.removeAll(before);
        for (Path p : created) {
            if (Files.isRegularFile(p) && Files.isReadable(p) && Files.size(p) < 1 << 20) {
                assertThat(new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1))
                        .as("new file %s", p).doesNotContain(keyBase64).doesNotContain("PRIVATE KEY");
            }
        }
    }

    @Test
    void toStringNeverShowsTheKey() throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(tmp, "Test CA", KeyType.EC_P256, 30);
        String pemKey = Pem.privateKey(ca.privateKey());
        String body = pemKey.lines().skip(1).findFirst().orElseThrow();

        assertThat(ca.toString()).contains("CN=Test CA", "ec-p256").doesNotContain(body);
        assertThat(CertificateAuthority.ephemeral("E").toString()).contains("origin=ephemeral");
    }

    private static Set<Path> listing(Path... dirs) throws IOException {
        Set<Path> out = new HashSet<>();
        for (Path d : dirs) {
            try (Stream<Path> s = Files.list(d)) {
                s.forEach(out::add);
            }
        }
        return out;
    }

    private static String pemOf(Object o) throws IOException {
        var out = new java.io.StringWriter();
        try (var w = new org.bouncycastle.openssl.jcajce.JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }

    private static void assertOneLineError(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String part) {
        assertThatThrownBy(call).isInstanceOf(CaException.class)
                .hasMessageContaining(part)
                .hasMessageContaining("(expected: ")
                .hasMessageNotContaining("\n");
    }
}
