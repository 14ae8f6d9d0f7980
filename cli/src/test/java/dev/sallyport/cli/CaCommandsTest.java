package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaCommandsTest {

    @TempDir
    Path dir;

    @Test
    void initWritesPrivateKeyFileAndRefusesToOverwrite() throws Exception {
        Path ca = dir.resolve("ca");
        CliRun first = CliRun.of("ca", "init", "--dir", ca.toString(), "--name", "Test CA");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out()).contains("ca.pem", "ca-key.pem", "SHA256:");
        assertThat(Files.getPosixFilePermissions(ca.resolve("ca-key.pem")))
                .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        byte[] key = Files.readAllBytes(ca.resolve("ca-key.pem"));

        CliRun second = CliRun.of("ca", "init", "--dir", ca.toString());
        assertThat(second.exit()).isEqualTo(1);
        assertThat(second.err()).contains("ca").hasLineCount(1);
        assertThat(Files.readAllBytes(ca.resolve("ca-key.pem"))).isEqualTo(key);
    }

    @Test
    void initRejectsBadArgumentsWithExit2() {
        assertThat(CliRun.of("ca", "init", "--dir", dir.toString(), "--key", "dsa").exit()).isEqualTo(2);
        assertThat(CliRun.of("ca", "init", "--dir", dir.toString(), "--days", "0").exit()).isEqualTo(2);
        assertThat(dir.resolve("ca-key.pem")).doesNotExist();
    }

    @Test
    void rsaCaCanBeCreated() throws Exception {
        Path ca = dir.resolve("rsa");
        assertThat(CliRun.of("ca", "init", "--dir", ca.toString(), "--key", "rsa-2048").exit()).isZero();
        assertThat(readCert(Files.readAllBytes(ca.resolve("ca.pem"))).getPublicKey().getAlgorithm()).isEqualTo("RSA");
    }

    @Test
    void exportWritesPemDerAndP12() throws Exception {
        Path ca = dir.resolve("ca");
        assertThat(CliRun.of("ca", "init", "--dir", ca.toString()).exit()).isZero();
        X509Certificate caCert = readCert(Files.readAllBytes(ca.resolve("ca.pem")));

        Path pem = dir.resolve("out.pem");
        assertThat(CliRun.of("ca", "export", "--dir", ca.toString(), "--out", pem.toString()).exit()).isZero();
        assertThat(readCert(Files.readAllBytes(pem))).isEqualTo(caCert);
        assertThat(Files.readString(pem)).doesNotContain("PRIVATE KEY");

        Path der = dir.resolve("out.der");
        assertThat(CliRun.of("ca", "export", "--dir", ca.toString(), "--format", "der", "--out", der.toString()).exit()).isZero();
        assertThat(readCert(Files.readAllBytes(der))).isEqualTo(caCert);

        Path bundle = dir.resolve("bundle.pem");
        assertThat(CliRun.of("ca", "export", "--dir", ca.toString(), "--bundle", "--out", bundle.toString()).exit()).isZero();
        long certs = Files.readString(bundle).lines().filter(l -> l.equals("-----BEGIN CERTIFICATE-----")).count();
        assertThat(certs).isGreaterThan(1);

        Path p12 = dir.resolve("trust.p12");
        assertThat(CliRun.of("ca", "export", "--dir", ca.toString(), "--format", "p12", "--out", p12.toString()).exit()).isZero();
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(Files.newInputStream(p12), "changeit".toCharArray());
        assertThat(store.getCertificateAlias(caCert)).isNotNull();
        assertThat(store.isCertificateEntry(store.getCertificateAlias(caCert))).isTrue();
    }

    @Test
    void exportWithoutCaSaysHowToCreateOne() {
        CliRun run = CliRun.of("ca", "export", "--dir", dir.resolve("none").toString());
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err()).contains("sallyport ca init").hasLineCount(1);
    }

    @Test
    void exportRejectsUnknownFormat() throws Exception {
        Path ca = dir.resolve("ca");
        assertThat(CliRun.of("ca", "init", "--dir", ca.toString()).exit()).isZero();
        CliRun run = CliRun.of("ca", "export", "--dir", ca.toString(), "--format", "jks");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("--format: 'jks' (expected: pem, der or p12)");
    }

    private static X509Certificate readCert(byte[] bytes) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(bytes));
    }

    static Set<PosixFilePermission> perms(Path p) throws Exception {
        return Files.getPosixFilePermissions(p);
    }
}
