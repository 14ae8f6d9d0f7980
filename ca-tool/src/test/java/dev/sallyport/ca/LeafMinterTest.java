package dev.sallyport.ca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LeafMinterTest {
    private static final CertificateAuthority CA = CertificateAuthority.ephemeral("Minter Test CA");
    private static ExecutorService pool;

    private final CountingListener listener = new CountingListener();
    private final MutableClock clock = new MutableClock();

    @BeforeAll
    static void startPool() {
        pool = Executors.newFixedThreadPool(4);
    }

    @AfterAll
    static void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void concurrentRequestsForOneHostShareOneMint() throws Exception {
        try (LeafMinter minter = new LeafMinter(CA, pool, clock, listener)) {
            int threads = 8;
            int perThread = 25;
            CountDownLatch start = new CountDownLatch(1);
            List<CompletableFuture<List<CompletableFuture<LeafCertificate>>>> callers = new ArrayList<>();
            ExecutorService callerPool = Executors.newFixedThreadPool(threads);
            try {
                for (int t = 0; t < threads; t++) {
                    callers.add(CompletableFuture.supplyAsync(() -> {
                        await(start);
                        List<CompletableFuture<LeafCertificate>> mine = new ArrayList<>();
                        for (int i = 0; i < perThread; i++) {
                            mine.add(minter.mint(i % 2 == 0 ? "api.example.test" : "API.Example.Test."));
                        }
                        return mine;
                    }, callerPool));
                }
                start.countDown();
                Set<LeafCertificate> distinct = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
                for (var caller : callers) {
                    for (var f : caller.get(30, TimeUnit.SECONDS)) {
                        distinct.add(f.get(30, TimeUnit.SECONDS));
                    }
                }
                assertThat(distinct).hasSize(1);
                assertThat(listener.minted).containsExactly("api.example.test");
                assertThat(listener.hits.get()).isEqualTo(threads * perThread - 1);
            } finally {
                callerPool.shutdownNow();
            }
        }
    }

    @Test
    void mintReturnsBeforeSigningAndNeverBlocksTheCaller() {
        ManualExecutor executor = new ManualExecutor();
        try (LeafMinter minter = new LeafMinter(CA, executor, clock, listener)) {
            CompletableFuture<LeafCertificate> first = minter.mint("slow.example.test");
            CompletableFuture<LeafCertificate> second = minter.mint("slow.example.test");

            assertThat(first).isNotDone();
            assertThat(second).isNotDone();
            assertThat(executor.pending()).isEqualTo(1);
            assertThat(minter.cachedOrNull("slow.example.test")).isNull();

            executor.runAll();
            assertThat(first.join()).isSameAs(second.join());
            assertThat(minter.cachedOrNull("slow.example.test")).isSameAs(first.join());
            assertThat(listener.minted).hasSize(1);
            assertThat(listener.durations.getFirst()).isPositive();
        }
    }

    @Test
    void cacheHitsAreReportedAndServeTheSameCertificate() {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            assertThat(minter.cachedOrNull("api.example.test")).isNull();
            LeafCertificate a = minter.mint("api.example.test").join();
            LeafCertificate b = minter.mint("api.example.test").join();
            LeafCertificate c = minter.cachedOrNull("api.example.test");

            assertThat(b).isSameAs(a);
            assertThat(c).isSameAs(a);
            assertThat(listener.minted).hasSize(1);
            assertThat(listener.hits.get()).isEqualTo(2);
        }
    }

    @Test
    void aCachedLeafIsReplacedAfterHalfItsValidity() {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener, 100, Duration.ofDays(2))) {
            Instant start = clock.instant();
            X509Certificate first = minter.mint("api.example.test").join().leaf();
            assertThat(first.getNotBefore().toInstant()).isEqualTo(start.minus(LeafMinter.BACKDATE));
            assertThat(first.getNotAfter().toInstant()).isEqualTo(start.plus(Duration.ofDays(2)));

            clock.advance(Duration.ofHours(23));
            assertThat(minter.mint("api.example.test").join().leaf()).isEqualTo(first);

            clock.advance(Duration.ofHours(1).plusSeconds(1));
            assertThat(minter.cachedOrNull("api.example.test")).isNull();
            X509Certificate second = minter.mint("api.example.test").join().leaf();
            assertThat(second.getSerialNumber()).isNotEqualTo(first.getSerialNumber());
            assertThat(second.getNotBefore().toInstant()).isEqualTo(clock.instant().minus(LeafMinter.BACKDATE));
            assertThat(listener.minted).hasSize(2);
        }
    }

    @Test
    void aLeafNeverOutlivesItsCa(@TempDir Path dir) throws Exception {
        CertificateAuthority shortCa = CertificateAuthority.init(dir, "Short CA", KeyType.EC_P256, 1, clock);
        try (LeafMinter minter = new LeafMinter(shortCa, Runnable::run, clock, listener)) {
            X509Certificate leaf = minter.mint("api.example.test").join().leaf();
            assertThat(leaf.getNotAfter()).isEqualTo(shortCa.certificate().getNotAfter());

            clock.advance(Duration.ofDays(2)); // the CA has expired: minting fails closed, and is not cached
            assertThatThrownBy(() -> minter.mint("new.example.test").join())
                    .isInstanceOf(CompletionException.class)
                    .hasMessageContaining("cannot mint a certificate for new.example.test: the CA expires at");
            assertThat(minter.cachedOrNull("api.example.test")).isNull();
            assertThat(listener.minted).hasSize(1);
        }
    }

    @Test
    void dnsLeafHasTheServerCertificateProfile() throws Exception {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            LeafCertificate minted = minter.mint("API.Example.Test").join();
            X509Certificate leaf = minted.leaf();
            X509Certificate caCert = CA.certificate();

            leaf.verify(caCert.getPublicKey());
            assertThat(minted.chain()).containsExactly(leaf, caCert);
            assertThat(leaf.getIssuerX500Principal()).isEqualTo(caCert.getSubjectX500Principal());
            assertThat(leaf.getSubjectX500Principal().getName()).isEqualTo("CN=api.example.test");
            assertThat(leaf.getSubjectAlternativeNames()).containsExactly(List.of(2, "api.example.test"));
            assertThat(leaf.getBasicConstraints()).isEqualTo(-1);
            assertThat(leaf.getKeyUsage()).startsWith(true, false, false, false, false, false, false);
            assertThat(leaf.getExtendedKeyUsage()).containsExactly(KeyPurposeId.id_kp_serverAuth.getId());
            assertThat(leaf.getCriticalExtensionOIDs()).containsExactlyInAnyOrder(
                    Extension.basicConstraints.getId(), Extension.keyUsage.getId());
            byte[] caSki = SubjectKeyIdentifier.getInstance(ASN1OctetString.getInstance(
                    caCert.getExtensionValue(Extension.subjectKeyIdentifier.getId())).getOctets()).getKeyIdentifier();
            byte[] aki = AuthorityKeyIdentifier.getInstance(ASN1OctetString.getInstance(
                    leaf.getExtensionValue(Extension.authorityKeyIdentifier.getId())).getOctets())
                    .getKeyIdentifierOctets();
            assertThat(aki).isEqualTo(caSki);
            assertThat(leaf.getExtensionValue(Extension.subjectKeyIdentifier.getId())).isNotNull();
            BigInteger serial = leaf.getSerialNumber();
            assertThat(serial.signum()).isPositive();
            assertThat(serial.bitLength()).isLessThanOrEqualTo(128);
            assertThat(minted.toString()).contains("CN=api.example.test", "key=<hidden>");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "10.1.2.3", "::1", "[::1]", "2001:db8::5"})
    void ipLiteralsGetAnIpAddressSan(String ip) throws Exception {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            X509Certificate leaf = minter.mint(ip).join().leaf();
            Collection<List<?>> sans = leaf.getSubjectAlternativeNames();
            assertThat(sans).hasSize(1);
            List<?> san = sans.iterator().next();
            assertThat(san.get(0)).isEqualTo(7);
            String bare = ip.replace("[", "").replace("]", "");
            assertThat(java.net.InetAddress.ofLiteral((String) san.get(1)))
                    .isEqualTo(java.net.InetAddress.ofLiteral(bare));
        }
    }

    @Test
    void bracketedAndBareIpv6ShareOneEntry() {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            assertThat(minter.mint("[::1]").join()).isSameAs(minter.mint("0:0:0:0:0:0:0:1").join());
            assertThat(listener.minted).hasSize(1);
        }
    }

    @Test
    void aHostNameLongerThan64CharactersHasNoCnAndACriticalSan() throws Exception {
        String host = "a".repeat(60) + ".example.test";
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            X509Certificate leaf = minter.mint(host).join().leaf();
            assertThat(leaf.getSubjectX500Principal().getName()).isEmpty();
            assertThat(leaf.getCriticalExtensionOIDs()).contains(Extension.subjectAlternativeName.getId());
            assertThat(leaf.getSubjectAlternativeNames()).containsExactly(List.of(2, host));
        }
    }

    @Test
    void oneLeafKeyPerMinterAndNeverTheCaKey() {
        try (LeafMinter one = new LeafMinter(CA, Runnable::run, clock, listener);
             LeafMinter two = new LeafMinter(CA, Runnable::run, clock, listener)) {
            LeafCertificate a = one.mint("a.example.test").join();
            LeafCertificate b = one.mint("b.example.test").join();
            LeafCertificate c = two.mint("a.example.test").join();

            assertThat(a.key()).isSameAs(b.key());
            assertThat(a.leaf().getPublicKey()).isEqualTo(b.leaf().getPublicKey());
            assertThat(c.key().getEncoded()).isNotEqualTo(a.key().getEncoded());
            assertThat(a.key().getEncoded()).isNotEqualTo(CA.privateKey().getEncoded());
            assertThat(a.leaf().getPublicKey()).isNotEqualTo(CA.certificate().getPublicKey());
            assertThat(a.key().getAlgorithm()).isEqualTo("EC");
            assertThat(a.leaf().getSerialNumber()).isNotEqualTo(b.leaf().getSerialNumber());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a..b", ".example.test", "1.2.3", "01.2.3.4", "256.1.1.1", "1.2.3.4.5",
            "exa mple.test", "-a.example.test", "a-.example.test", "\u00fc.example.test", "[1.2.3.4]",
            "fe80::1%eth0", "*.example.test", "host:443", "a/b"})
    void invalidNamesFailWithOneLine(String bad) {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener)) {
            CompletableFuture<LeafCertificate> f = minter.mint(bad);
            assertThat(f).isCompletedExceptionally();
            assertThatThrownBy(f::join).hasCauseInstanceOf(IllegalArgumentException.class)
                    .cause().hasMessageContaining("(expected: ").hasMessageNotContaining("\n");
            assertThat(minter.cachedOrNull(bad)).isNull();
            assertThat(listener.minted).isEmpty();
        }
    }

    @Test
    void theCacheIsBounded() {
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener, 5, Duration.ofDays(7))) {
            Set<String> hosts = new HashSet<>();
            for (int i = 0; i < 40; i++) {
                hosts.add("h" + i + ".example.test");
                minter.mint("h" + i + ".example.test").join();
            }
            assertThat(minter.cachedCount()).isLessThanOrEqualTo(5);
            assertThat(listener.minted).containsExactlyInAnyOrderElementsOf(hosts);
        }
    }

    @Test
    void aFailedStartIsNotCached() {
        AtomicBoolean reject = new AtomicBoolean(true);
        try (LeafMinter minter = new LeafMinter(CA, task -> {
            if (reject.getAndSet(false)) {
                throw new RejectedExecutionException("pool is full");
            }
            task.run();
        }, clock, listener)) {
            assertThatThrownBy(() -> minter.mint("api.example.test").join())
                    .hasMessageContaining("minting a certificate for api.example.test could not start: pool is full");
            assertThat(minter.mint("api.example.test").join().leaf()).isNotNull();
            assertThat(listener.minted).hasSize(1);
        }
    }

    @Test
    void cancellingOneCallersFutureDoesNotPoisonTheCache() {
        ManualExecutor executor = new ManualExecutor();
        try (LeafMinter minter = new LeafMinter(CA, executor, clock, listener)) {
            minter.mint("api.example.test").cancel(true);
            CompletableFuture<LeafCertificate> other = minter.mint("api.example.test");
            executor.runAll();
            assertThat(other.join().leaf()).isNotNull();
            assertThat(minter.cachedOrNull("api.example.test")).isSameAs(other.join());
        }
    }

    @Test
    void aClosedMinterRefuses() {
        LeafMinter minter = new LeafMinter(CA, Runnable::run, clock, listener);
        minter.mint("api.example.test").join();
        minter.close();
        assertThat(minter.cachedOrNull("api.example.test")).isNull();
        assertThatThrownBy(() -> minter.mint("api.example.test").join()).hasMessageContaining("LeafMinter is closed");
    }

    @Test
    void constructorRejectsBadSettings() {
        assertThatThrownBy(() -> new LeafMinter(CA, Runnable::run, clock, listener, 0, Duration.ofDays(1)))
                .hasMessage("maxCached: 0 (expected: > 0)");
        assertThatThrownBy(() -> new LeafMinter(CA, Runnable::run, clock, listener, 10, Duration.ofSeconds(5)))
                .hasMessage("validity: PT5S (expected: between 2 minutes and 397 days)");
    }

    @Test
    void aThrowingListenerDoesNotBreakMinting() {
        MintListener broken = new MintListener() {
            @Override
            public void minted(String host, Duration took) {
                throw new IllegalStateException("metrics down");
            }

            @Override
            public void cacheHit(String host) {
                throw new IllegalStateException("metrics down");
            }
        };
        try (LeafMinter minter = new LeafMinter(CA, Runnable::run, InstantSource.system(), broken)) {
            assertThat(minter.mint("api.example.test").join()).isNotNull();
            assertThat(minter.mint("api.example.test").join()).isNotNull();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unused")
    private static String hex(byte[] b) {
        return Arrays.toString(b);
    }
}
