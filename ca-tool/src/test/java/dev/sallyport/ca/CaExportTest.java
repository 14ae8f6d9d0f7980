package dev.sallyport.ca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.ExternalProcess;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaExportTest {
    private static final CertificateAuthority CA = CertificateAuthority.ephemeral("Export Test CA");

    private static List<Certificate> parse(byte[] bytes) throws Exception {
        return new ArrayList<>(CertificateFactory.getInstance("X.509")
                .generateCertificates(new ByteArrayInputStream(bytes)));
    }

    @Test
    void pemHoldsExactlyTheCaCertificate() throws Exception {
        byte[] pem = CaExport.pem(CA, false);
        String text = new String(pem, StandardCharsets.US_ASCII);

        assertThat(text).startsWith("-----BEGIN CERTIFICATE-----").doesNotContain("PRIVATE KEY");
        assertThat(parse(pem)).containsExactly(CA.certificate());
    }

    @Test
    void pemBundleIsTheCaFollowedByTheSystemRoots() throws Exception {
        List<Certificate> bundle = parse(CaExport.pem(CA, true));
        List<X509Certificate> roots = CaExport.systemRoots();

        assertThat(roots).isNotEmpty();
        assertThat(bundle.size()).isGreaterThan(1).isEqualTo(1 + roots.size());
        assertThat(bundle.getFirst()).isEqualTo(CA.certificate());
        assertThat(bundle.subList(1, bundle.size())).containsExactlyElementsOf(roots);
    }

    @Test
    void derRoundTrips() throws Exception {
        byte[] der = CaExport.der(CA);
        assertThat(der[0]).isEqualTo((byte) 0x30); // an ASN.1 SEQUENCE, not PEM text
        assertThat(CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der)))
                .isEqualTo(CA.certificate());
    }

    @Test
    void p12IsATrustStoreWithTheCaAsATrustedEntry() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(CaExport.p12(CA, "s3cret".toCharArray(), false)), "s3cret".toCharArray());

        assertThat(Collections.list(store.aliases())).containsExactly(CaExport.P12_ALIAS);
        assertThat(store.isCertificateEntry(CaExport.P12_ALIAS)).isTrue();
        assertThat(store.isKeyEntry(CaExport.P12_ALIAS)).isFalse();
        assertThat(store.getCertificate(CaExport.P12_ALIAS)).isEqualTo(CA.certificate());
    }

    @Test
    void p12BundleHoldsTheSystemRootsToo() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(CaExport.p12(CA, "pw".toCharArray(), true)), "pw".toCharArray());

        assertThat(store.size()).isEqualTo(1 + CaExport.systemRoots().size());
        assertThat(store.getCertificate(CaExport.P12_ALIAS)).isEqualTo(CA.certificate());
        for (String alias : Collections.list(store.aliases())) {
            assertThat(store.isCertificateEntry(alias)).as(alias).isTrue();
        }
    }

    @Test
    void p12RejectsTheWrongPassword() {
        byte[] p12 = CaExport.p12(CA, "right".toCharArray(), false);
        assertThatThrownBy(() -> KeyStore.getInstance("PKCS12")
                .load(new ByteArrayInputStream(p12), "wrong".toCharArray())).isInstanceOf(IOException.class);
    }

    @Test
    void opensslReadsTheP12(@TempDir Path dir) throws Exception {
        Path p12 = Files.write(dir.resolve("ca.p12"), CaExport.p12(CA, "pw".toCharArray(), false));
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30),
                List.of("openssl", "pkcs12", "-in", p12.toString(), "-nokeys", "-passin", "pass:pw"), null);

        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(parse(r.stdout().getBytes(StandardCharsets.US_ASCII))).containsExactly(CA.certificate());
    }

    @Test
    void exportNeedsOnlyTheCertificate(@TempDir Path dir) throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(dir, "Cert Only", KeyType.EC_P256, 5);
        Files.delete(dir.resolve(CertificateAuthority.KEY_FILE));
        X509Certificate cert = CaExport.readCertificate(dir.resolve(CertificateAuthority.CERT_FILE));

        assertThat(cert).isEqualTo(ca.certificate());
        assertThat(CaExport.pem(cert, false)).isEqualTo(CaExport.pem(ca, false));
        assertThat(CaExport.der(cert)).isEqualTo(CaExport.der(ca));
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(CaExport.p12(cert, "pw".toCharArray(), false)), "pw".toCharArray());
        assertThat(store.getCertificate(CaExport.P12_ALIAS)).isEqualTo(cert);
    }

    @Test
    void readCertificateRejectsWhatIsNotACaCertificate(@TempDir Path dir) throws Exception {
        Path server = dev.sallyport.testing.TestPki.create().issue("server.example.test").writeCertPem(dir);
        Path junk = Files.writeString(dir.resolve("junk.pem"), "junk");

        assertThatThrownBy(() -> CaExport.readCertificate(server)).isInstanceOf(CaException.class)
                .hasMessageContaining("is not a CA certificate").hasMessageNotContaining("\n");
        assertThatThrownBy(() -> CaExport.readCertificate(junk)).isInstanceOf(CaException.class)
                .hasMessageContaining("CA certificate " + junk + ": no PEM certificate found");
        assertThatThrownBy(() -> CaExport.readCertificate(dir.resolve("missing.pem")))
                .isInstanceOf(CaException.class).hasMessageContaining("file not found");
    }

    @Test
    void systemRootsComeFromTheSystemBundleWhenPresent() throws Exception {
        List<X509Certificate> roots = CaExport.systemRoots();
        if (Files.isRegularFile(CaExport.SYSTEM_BUNDLE)) {
            assertThat(roots).containsExactlyElementsOf(
                    parse(Files.readAllBytes(CaExport.SYSTEM_BUNDLE)).stream().map(X509Certificate.class::cast)
                            .toList());
        } else {
            assertThat(roots).containsExactlyInAnyOrderElementsOf(CaExport.jdkRoots());
        }
        assertThat(CaExport.jdkRoots()).isNotEmpty();
    }
}
