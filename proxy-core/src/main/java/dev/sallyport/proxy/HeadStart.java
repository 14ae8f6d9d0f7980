package dev.sallyport.proxy;

import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.LeafMinter;
import dev.sallyport.policy.CaSettings;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.UpstreamSettings;
import dev.sallyport.proxy.internal.Transports;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.proxy.mitm.ServerContexts;
import dev.sallyport.proxy.upstream.UpstreamTls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyStore;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.LoggerFactory;

/**
 * The slow, cold parts of a proxy start (class initialisation, native libraries, EC arithmetic in the
 * interpreter), begun on background threads by {@code cli.Main} before the command line is even parsed, so
 * that they overlap the parse instead of following it: the metrics registry, the leaf key pair, the server TLS
 * context with BoringSSL and the epoll library, and, for {@code sallyport proxy}, the policy it will load read
 * ahead with the CA and upstream TLS context that policy names ({@code sallyport run}, whose policy is assembled
 * later, gets the JDK's default trust store warmed instead). Reading ahead has no side effects (a CA is only
 * ever loaded here, never created), and what was read ahead is used only where the start's own policy has the
 * same settings.
 *
 * <p>The next {@link SallyportProxy#start} takes what was begun (once); a start without a head start does the
 * same work itself, and a head start no start takes leaves a few idle objects.
 */
public final class HeadStart {

    private static final AtomicReference<HeadStart> PENDING = new AtomicReference<>();

    final CompletableFuture<ProxyMetrics> metrics;
    final CompletableFuture<KeyPair> leafKeys;
    final CompletableFuture<ServerContexts> serverTls;
    /** The policy the command line would load, read ahead; empty when not known or the file did not load. */
    private final CompletableFuture<Optional<Policy>> policy;
    private final CompletableFuture<Optional<CertificateAuthority>> ca;
    private final CompletableFuture<Optional<UpstreamTls>> upstreamTls;

    private HeadStart(boolean warmSystemTrust, Callable<Policy> readPolicy) {
        metrics = background("metrics", ProxyMetrics::new);
        leafKeys = background("leaf-keys", LeafMinter::newLeafKeys);
        serverTls = background("server-tls", () -> {
            Transports.nativeTransport();   // loads the epoll library beside BoringSSL
            return new ServerContexts();
        });
        policy = readPolicy == null ? CompletableFuture.completedFuture(Optional.empty())
                : background("policy", () -> Optional.of(readPolicy.call()))
                        .exceptionally(failure -> Optional.empty());   // the start's own load reports it
        ca = policy.thenCompose(read -> read.isEmpty() ? CompletableFuture.completedFuture(Optional.empty())
                : background("ca", () -> existingCa(read.get().ca())));
        upstreamTls = policy.thenCompose(read -> read.isEmpty() ? CompletableFuture.completedFuture(Optional.empty())
                : background("upstream-tls", () -> Optional.of(UpstreamTls.context(read.get().upstream()))));
        if (warmSystemTrust) {   // nothing to take: the JDK's parse of the system roots, which most policies use
            background("system-trust", () -> {
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm()).init((KeyStore) null);
                return null;
            });
        }
    }

    /** Begins the work of the next proxy start, whatever its policy. */
    public static void begin() {
        begin(true, null);
    }

    /**
     * Begins the work of the next start of {@code sallyport proxy}, reading ahead the policy that command line
     * would load.
     *
     * @param config the file named by {@code --config} (a guess ahead of the parse), or null for the built-in policy
     */
    public static void beginProxy(Path config) {
        // The policy read ahead brings the system roots in with its upstream TLS context when it uses them. Only a
        // regular file is read ahead: a pipe or a device (--config <(...), /dev/stdin) can be read only once, and
        // that read is the start's.
        if (config != null && !Files.isRegularFile(config)) {
            begin(true, null);
            return;
        }
        begin(false, config == null ? Policy::defaults : () -> PolicyLoader.load(config));
    }

    private static void begin(boolean warmSystemTrust, Callable<Policy> readPolicy) {
        quietNettyJfr();
        // SLF4J initialises on first use; threads that log while another initialises it get their lines queued
        // and replayed, with a three-line warning on stderr. So it initialises here, before the threads start.
        LoggerFactory.getILoggerFactory();
        HeadStart old = PENDING.getAndSet(new HeadStart(warmSystemTrust, readPolicy));
        if (old != null) {
            old.metrics.thenAccept(ProxyMetrics::close);
        }
    }

    /** What {@link #begin} or {@link #beginProxy} started, for one start only; a fresh one when none was begun. */
    static HeadStart take() {
        HeadStart begun = PENDING.getAndSet(null);
        return begun != null ? begun : new HeadStart(false, null);
    }

    /**
     * The CA for {@code settings}: the one read ahead when the policy read ahead has the same CA settings and the
     * CA was there to load (a failed load included: the start reports it as its own), otherwise {@code load} run
     * now.
     */
    CompletableFuture<CertificateAuthority> caFor(CaSettings settings, Callable<CertificateAuthority> load) {
        return readAhead(ca, read -> read.ca().equals(settings), "ca", load);
    }

    /** The upstream TLS context for {@code settings}, read ahead or made now, as {@link #caFor}. */
    CompletableFuture<UpstreamTls> upstreamTlsFor(UpstreamSettings settings, Callable<UpstreamTls> make) {
        return readAhead(upstreamTls, read -> read.upstream().equals(settings), "upstream-tls", make);
    }

    private <T> CompletableFuture<T> readAhead(CompletableFuture<Optional<T>> made, Predicate<Policy> same,
                                               String name, Callable<T> now) {
        return policy.thenCompose(read -> read.isPresent() && same.test(read.get())
                ? made.thenCompose(value -> value.isPresent() ? CompletableFuture.completedFuture(value.get())
                        : background(name, now))
                : background(name, now));
    }

    /** The CA of {@code settings}, loaded, never created: empty when it is the state folder's and not there yet. */
    private static Optional<CertificateAuthority> existingCa(CaSettings settings) throws CaException {
        if (settings.cert() != null && settings.key() != null) {
            return Optional.of(SallyportProxy.loadCa(settings));   // named files: only ever loaded
        }
        Path folder = SallyportProxy.stateCaFolder();
        Path cert = folder.resolve(CertificateAuthority.CERT_FILE);
        Path key = folder.resolve(CertificateAuthority.KEY_FILE);
        if (Files.isRegularFile(cert) && Files.isRegularFile(key)) {
            return Optional.of(CertificateAuthority.load(cert, key));   // never loadOrInit: nothing is created here
        }
        return Optional.empty();
    }

    /**
     * Netty's allocator emits JDK Flight Recorder events when JFR is present; loading JFR for them costs about
     * 0.3 s of start-up, for events few will record. Netty reads the switch once, when its first class
     * initialises, so this runs before anything touches Netty; {@code -Dio.netty.jfr.enabled=true} brings the
     * events back.
     */
    static void quietNettyJfr() {
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
    }

    /** Runs {@code task} on a new platform daemon thread. */
    static <T> CompletableFuture<T> background(String name, Callable<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("sallyport-start-" + name).start(() -> {
            try {
                result.complete(task.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        return result;
    }
}
