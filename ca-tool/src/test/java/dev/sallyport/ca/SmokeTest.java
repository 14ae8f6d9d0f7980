package dev.sallyport.ca;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SmokeTest {
    @Test
    void initLoadMint(@TempDir Path dir) throws Exception {
        CertificateAuthority ca = CertificateAuthority.init(dir.resolve("ca"), "Test CA", KeyType.EC_P256, 10);
        CertificateAuthority loaded = CertificateAuthority.load(dir.resolve("ca/ca.pem"), dir.resolve("ca/ca-key.pem"));
        assertThat(loaded.certificate()).isEqualTo(ca.certificate());
        try (LeafMinter minter = new LeafMinter(loaded, Runnable::run, InstantSource.system(), MintListener.NONE)) {
            LeafCertificate leaf = minter.mint("api.example.test").join();
            leaf.leaf().verify(ca.certificate().getPublicKey());
            assertThat(minter.cachedOrNull("API.example.test.")).isSameAs(leaf);
        }
        assertThat(CaExport.pem(ca, true).length).isGreaterThan(CaExport.pem(ca, false).length);
    }
}
