package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox trust store kept in the start-up cache: used only for the same CA and JDK roots, and only when intact;
 * what it holds is the store that would have been built.
 */
class StoreCacheTest {

    @Test
    void theStoreIsKeptAndHoldsTheCaAndTheJdkRoots(@TempDir Path dir) throws Exception {
        byte[] ca = CaExport.pem(CertificateAuthority.ephemeral("Store cache test CA"), false);
        Path run = Files.createDirectory(dir.resolve("run"));
        Path cache = dir.resolve("cache");
        TrustFiles.write(run, ca, Optional.of(cache));
        Optional<byte[]> kept = StoreCache.read(cache, StoreCache.key(ca, TrustFiles.jdkCacerts()));
        assertThat(kept).contains(Files.readAllBytes(run.resolve(TrustFiles.P12)));
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(kept.orElseThrow()), TrustFiles.P12_PASSWORD.toCharArray());
        Certificate first = TrustFiles.parse(ca).getFirst();
        assertThat(store.getCertificate("sallyport-ca-0")).isEqualTo(first);
        assertThat(store.size()).isGreaterThan(1);   // the JDK's roots beside it
    }

    @Test
    void anotherCaOrChangedRootsMiss(@TempDir Path dir) throws Exception {
        byte[] ca = CaExport.pem(CertificateAuthority.ephemeral("Store cache test CA"), false);
        byte[] other = CaExport.pem(CertificateAuthority.ephemeral("Another test CA"), false);
        Path cacerts = Files.write(dir.resolve("cacerts"), new byte[] {1, 2, 3});
        byte[] key = StoreCache.key(ca, cacerts);
        Path cache = dir.resolve("cache");
        StoreCache.write(cache, key, new byte[] {9, 9, 9});
        assertThat(StoreCache.read(cache, key)).hasValueSatisfying(s -> assertThat(s).containsExactly(9, 9, 9));
        assertThat(StoreCache.read(cache, StoreCache.key(other, cacerts))).isEmpty();
        Files.write(cacerts, new byte[] {1, 2, 4});   // same size, new content: another change time
        Files.setLastModifiedTime(cacerts, FileTime.from(Instant.EPOCH));
        assertThat(StoreCache.read(cache, StoreCache.key(ca, cacerts))).isEmpty();
        Path replaced = Files.write(dir.resolve("cacerts.new"), new byte[] {1, 2, 3});
        Files.move(replaced, cacerts, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(StoreCache.read(cache, StoreCache.key(ca, cacerts))).isEmpty();
    }

    @Test
    void aDamagedFileIsNotUsed(@TempDir Path dir) throws Exception {
        byte[] ca = CaExport.pem(CertificateAuthority.ephemeral("Store cache test CA"), false);
        byte[] key = StoreCache.key(ca, TrustFiles.jdkCacerts());
        Path cache = dir.resolve("cache");
        StoreCache.write(cache, key, "a store's bytes".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        Path file = cache.resolve(StoreCache.FILE);
        byte[] whole = Files.readAllBytes(file);
        byte[] flipped = whole.clone();
        flipped[flipped.length - 3] ^= 0x20;
        Files.write(file, flipped);
        assertThat(StoreCache.read(cache, key)).isEmpty();
        Files.write(file, java.util.Arrays.copyOf(whole, whole.length - 2));
        assertThat(StoreCache.read(cache, key)).isEmpty();
        Files.delete(file);
        Files.createSymbolicLink(file, dir.resolve("elsewhere"));
        Files.write(dir.resolve("elsewhere"), whole);
        assertThat(StoreCache.read(cache, key)).isEmpty();   // a link is not followed
    }
}
