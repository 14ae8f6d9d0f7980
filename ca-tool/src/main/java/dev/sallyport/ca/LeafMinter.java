package dev.sallyport.ca;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import dev.sallyport.ca.internal.Certificates;
import dev.sallyport.ca.internal.LeafSigner;
import dev.sallyport.ca.internal.Pem;
import dev.sallyport.ca.internal.SubjectName;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mints server certificates for host names and IP literals, signed by a {@link CertificateAuthority}.
 *
 * <p>One EC P-256 leaf key pair is generated per minter (separate from the CA key) and shared by every leaf, so
 * a new host costs one signature, not a key generation. Leaves are cached in a bounded Caffeine cache; concurrent
 * requests for one host share one mint. Signing runs on the given {@link Executor}: {@link #mint} never blocks.
 * A cached leaf is used for half its validity, so a served certificate always has at least half of it left.
 * Time comes from the injected {@link InstantSource} (which also drives cache expiry), so tests control it.
 */
public final class LeafMinter implements AutoCloseable {
    /** Default bound on cached leaves. */
    public static final int DEFAULT_MAX_CACHED = 10_000;
    /** Default leaf validity (from the time of minting). */
    public static final Duration DEFAULT_VALIDITY = Duration.ofDays(7);
    /** How far before the minting time a leaf's notBefore lies, to tolerate client clock skew. */
    public static final Duration BACKDATE = Duration.ofHours(1);

    private static final Logger LOGGER = LoggerFactory.getLogger(LeafMinter.class);
    private static final Duration MIN_VALIDITY = Duration.ofMinutes(2);
    private static final Duration MAX_VALIDITY = Duration.ofDays(397);
    private static final Duration STALE_MARGIN = Duration.ofMinutes(1);

    private final CertificateAuthority ca;
    private final Executor executor;
    private final InstantSource clock;
    private final MintListener listener;
    private final Duration validity;
    private final PrivateKey leafKey;
    private final LeafSigner signer;
    private final AsyncCache<String, Outcome> cache;
    private volatile boolean closed;

    /** A minter with {@link #DEFAULT_MAX_CACHED} entries and {@link #DEFAULT_VALIDITY}. */
    public LeafMinter(CertificateAuthority ca, Executor executor, InstantSource clock, MintListener listener) {
        this(ca, executor, clock, listener, DEFAULT_MAX_CACHED, DEFAULT_VALIDITY);
    }

    /**
     * @param maxCached bound on cached leaves, at least 1
     * @param validity  leaf lifetime from minting, 2 minutes to 397 days (clamped to the CA's own expiry)
     */
    public LeafMinter(CertificateAuthority ca, Executor executor, InstantSource clock, MintListener listener,
                      int maxCached, Duration validity) {
        this(ca, newLeafKeys(), executor, clock, listener, maxCached, validity);
    }

    /**
     * A minter whose leaves carry {@code leafKeys} (made by {@link #newLeafKeys()}, which a start-up can run
     * beside other work), with {@link #DEFAULT_MAX_CACHED} entries and {@link #DEFAULT_VALIDITY}.
     */
    public LeafMinter(CertificateAuthority ca, KeyPair leafKeys, Executor executor, InstantSource clock,
                      MintListener listener) {
        this(ca, leafKeys, executor, clock, listener, DEFAULT_MAX_CACHED, DEFAULT_VALIDITY);
    }

    private LeafMinter(CertificateAuthority ca, KeyPair leafKeys, Executor executor, InstantSource clock,
                       MintListener listener, int maxCached, Duration validity) {
        this.ca = Objects.requireNonNull(ca, "ca");
        this.executor = Objects.requireNonNull(executor, "executor");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.listener = Objects.requireNonNull(listener, "listener");
        if (maxCached < 1) {
            throw new IllegalArgumentException("maxCached: " + maxCached + " (expected: > 0)");
        }
        if (validity.compareTo(MIN_VALIDITY) < 0 || validity.compareTo(MAX_VALIDITY) > 0) {
            throw new IllegalArgumentException("validity: " + validity + " (expected: between 2 minutes and 397 days)");
        }
        this.validity = validity;
        this.leafKey = leafKeys.getPrivate();
        this.signer = new LeafSigner(ca.certificate(), ca.privateKey(), leafKeys.getPublic());
        Instant origin = clock.instant();
        Ticker ticker = () -> Duration.between(origin, clock.instant()).toNanos();
        this.cache = Caffeine.newBuilder()
                .maximumSize(maxCached)
                .expireAfterWrite(validity.dividedBy(2))
                .ticker(ticker)
                .buildAsync();
    }

    /** A fresh EC P-256 key pair for the leaves of one minter (kept apart from the CA key). */
    public static KeyPair newLeafKeys() {
        return Certificates.generate(KeyType.EC_P256);
    }

    /**
     * The certificate for {@code hostOrIp}: from the cache, joining a mint in flight, or minted on the executor.
     * Never blocks. An invalid name, a closed minter or a signing failure completes the future exceptionally
     * (with a one-line message); failures are not cached. Cancelling the returned future does not affect others.
     * The future may complete on the signing executor's thread: an event loop should hop back before using it.
     *
     * @param hostOrIp a host name (case and one trailing dot ignored) or an IP literal (IPv6 optionally bracketed)
     */
    public CompletableFuture<LeafCertificate> mint(String hostOrIp) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("LeafMinter is closed"));
        }
        SubjectName name;
        try {
            name = SubjectName.parse(hostOrIp);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        String key = name.key();
        CompletableFuture<Outcome> existing = cache.getIfPresent(key);
        if (existing != null && (!existing.isDone() || fresh(existing))) {
            hit(key);
            return existing.thenApply(Outcome::leafOrThrow);
        }
        if (existing != null) {
            cache.asMap().remove(key, existing);
        }
        boolean[] created = new boolean[1];
        CompletableFuture<Outcome> future;
        try {
            future = cache.get(key, (k, ignored) -> {
                created[0] = true;
                return CompletableFuture.supplyAsync(() -> Outcome.of(() -> sign(name)), executor);
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new IllegalStateException(
                    "minting a certificate for " + key + " could not start: " + Pem.oneLine(e), e));
        }
        if (created[0]) {
            // failures are not cached; removing here, outside the cache's computation, is safe even when the
            // executor ran the task inline
            future.thenAccept(outcome -> {
                if (outcome.error() != null) {
                    cache.asMap().remove(key, future);
                }
            });
        } else {
            hit(key);
        }
        return future.thenApply(Outcome::leafOrThrow);
    }

    /**
     * The cached certificate for {@code hostOrIp} if one is ready, else {@code null} (then call {@link #mint}).
     * Cheap and non-blocking: meant for the event loop's fast path.
     */
    public /* @Nullable */ LeafCertificate cachedOrNull(String hostOrIp) {
        if (closed) {
            return null;
        }
        String key;
        try {
            key = SubjectName.parse(hostOrIp).key();
        } catch (IllegalArgumentException e) {
            return null;
        }
        CompletableFuture<Outcome> existing = cache.getIfPresent(key);
        if (existing == null || !existing.isDone() || !fresh(existing)) {
            return null;
        }
        hit(key);
        return existing.join().leaf();
    }

    /** The number of cached (or in-flight) leaves, after pending evictions. */
    public long cachedCount() {
        cache.synchronous().cleanUp();
        return cache.synchronous().estimatedSize();
    }

    /** The CA this minter signs with. */
    public CertificateAuthority ca() {
        return ca;
    }

    /** Drops every cached leaf; later {@link #mint} calls fail. Mints in flight still complete. */
    @Override
    public void close() {
        closed = true;
        cache.synchronous().invalidateAll();
    }

    private boolean fresh(CompletableFuture<Outcome> done) {
        if (done.isCompletedExceptionally() || done.join().error() != null) {
            return false;
        }
        X509Certificate leaf = done.join().leaf().leaf();
        Instant now = clock.instant();
        return !now.isBefore(leaf.getNotBefore().toInstant())
                && now.isBefore(leaf.getNotAfter().toInstant().minus(STALE_MARGIN));
    }

    private LeafCertificate sign(SubjectName name) {
        long started = System.nanoTime();
        Instant now = clock.instant();
        Instant caEnd = ca.certificate().getNotAfter().toInstant();
        Instant notAfter = now.plus(validity).isAfter(caEnd) ? caEnd : now.plus(validity);
        if (!notAfter.isAfter(now.plus(STALE_MARGIN))) {
            throw new IllegalStateException("cannot mint a certificate for " + name.key()
                    + ": the CA expires at " + caEnd + " (expected: a CA valid for longer; create a new one)");
        }
        X509Certificate leaf;
        try {
            leaf = signer.sign(name, now.minus(BACKDATE), notAfter);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IllegalStateException(
                    "cannot mint a certificate for " + name.key() + ": " + Pem.oneLine(e), e);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        LOGGER.debug("minted leaf certificate host={} serial={} took={}", name.key(),
                leaf.getSerialNumber().toString(16), took);
        try {
            listener.minted(name.key(), took);
        } catch (RuntimeException e) {
            LOGGER.warn("mint listener failed host={}", name.key(), e);
        }
        return new LeafCertificate(leafKey, new X509Certificate[] {leaf, ca.certificate()});
    }

    private void hit(String key) {
        try {
            listener.cacheHit(key);
        } catch (RuntimeException e) {
            LOGGER.warn("mint listener failed host={}", key, e);
        }
    }

    /**
     * A finished mint: a leaf, or the error that prevented it. The cache holds outcomes rather than failed
     * futures so that a failure is reported once to the callers (and not also logged by the cache).
     */
    private record Outcome(/* @Nullable */ LeafCertificate leaf, /* @Nullable */ RuntimeException error) {
        static Outcome of(java.util.function.Supplier<LeafCertificate> mint) {
            try {
                return new Outcome(mint.get(), null);
            } catch (RuntimeException e) {
                LOGGER.debug("minting failed", e);
                return new Outcome(null, e);
            }
        }

        LeafCertificate leafOrThrow() {
            if (error != null) {
                throw new CompletionException(error);
            }
            return leaf;
        }
    }

    @Override
    public String toString() {
        return "LeafMinter[ca=" + ca.certificate().getSubjectX500Principal().getName() + ", validity=" + validity
                + ", cached=" + cache.synchronous().estimatedSize() + "]";
    }
}
