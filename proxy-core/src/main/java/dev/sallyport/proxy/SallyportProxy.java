package dev.sallyport.proxy;

import com.github.benmanes.caffeine.cache.Ticker;
import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.LeafMinter;
import dev.sallyport.ca.MintListener;
import dev.sallyport.policy.CaSettings;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.admin.AdminServer;
import dev.sallyport.proxy.audit.AuditKey;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.connect.ConnectionSlot;
import dev.sallyport.proxy.connect.FrontendInitializer;
import dev.sallyport.proxy.connect.OriginalDestination;
import dev.sallyport.proxy.dns.DnsServer;
import dev.sallyport.proxy.dns.DnsStub;
import dev.sallyport.proxy.dns.LookupAudit;
import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.identity.ReportedRefusal;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.SecretStore;
import dev.sallyport.proxy.internal.AcceptPause;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.proxy.mitm.ServerContexts;
import dev.sallyport.proxy.reload.PolicyHolder;
import dev.sallyport.proxy.reload.Snapshot;
import dev.sallyport.proxy.internal.Transports;
import dev.sallyport.proxy.upstream.ParentProxy;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import dev.sallyport.proxy.upstream.UpstreamTls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running proxy: binds the listener and the admin listener, builds the CA minter, the upstream connector, the
 * audit log, metrics and policy holder, and the per-connection pipeline. {@link #close()} stops accepting, lets open exchanges finish for {@code timeouts.shutdownGrace},
 * then closes everything.
 */
public final class SallyportProxy implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(SallyportProxy.class);
    /**
     * The DNS stub's bounds: mappings at once (all clients), of one client (the clients known by address together,
     * or one registered sandbox), how long one lives after its name was asked, audit records.
     */
    private static final int DNS_TABLE = 32_768;
    private static final int DNS_MAPPINGS = 4096;
    /** Mappings kept free for each registered sandbox until it holds them (fewer when very many are registered). */
    private static final int DNS_RESERVE = 256;
    private static final Duration DNS_LIFETIME = Duration.ofMinutes(10);
    private static final int DNS_AUDIT_BURST = 200;
    private static final int DNS_AUDIT_PER_SECOND = 20;

    static {
        HeadStart.quietNettyJfr();
    }

    private final ProxyContext context;
    private final EventLoopGroup group;
    private final Channel server;
    private final CertificateAuthority ca;
    private final LeafMinter minter;
    private final ExecutorService mintExecutor;
    private final ExecutorService dnsExecutor;
    private final UpstreamConnector connector;
    private final ExchangeCore core;
    private final AdminServer admin;
    private final PolicyHolder holder;
    private final AuditLog audit;
    private final ProxyMetrics metrics;
    private final AtomicReference<Boolean> closed;
    private final DnsStub stub;
    private volatile DnsServer dns;
    private volatile Channel transparent;

    @SuppressWarnings("checkstyle:ParameterNumber")
    private SallyportProxy(ProxyContext context, EventLoopGroup group, Channel server, AdminServer admin,
                           PolicyHolder holder, AuditLog audit, ProxyMetrics metrics,
                           AtomicReference<Boolean> closed,
                           CertificateAuthority ca, LeafMinter minter, ExecutorService mintExecutor,
                           ExecutorService dnsExecutor, UpstreamConnector connector, DnsStub stub) {
        this.stub = stub;
        this.context = context;
        this.group = group;
        this.server = server;
        this.admin = admin;
        this.holder = holder;
        this.audit = audit;
        this.metrics = metrics;
        this.closed = closed;
        this.ca = ca;
        this.minter = minter;
        this.mintExecutor = mintExecutor;
        this.dnsExecutor = dnsExecutor;
        this.connector = connector;
        this.core = new ExchangeCore(context, connector);
    }

    /**
     * Opens the audit log and metrics, starts the policy holder (file watch and SIGHUP when the policy came from
     * a file), binds the proxy listener and the admin listener.
     */
    public static SallyportProxy start(ProxyOptions options) throws Exception {
        Policy policy = options.policy();
        InstantSource clock = options.clock() != null ? options.clock() : InstantSource.system();
        // The slow, independent parts of start-up (mostly class loading, initialisation and cold EC arithmetic)
        // run side by side: the CA with BouncyCastle, BoringSSL with the upstream trust, and what the head start
        // began before the command line was parsed (metrics, leaf keys, server TLS).
        HeadStart head = HeadStart.take();
        CompletableFuture<ProxyMetrics> metricsLater = head.metrics;
        CompletableFuture<CertificateAuthority> caLater = options.ca() != null
                ? CompletableFuture.completedFuture(options.ca())
                : head.caFor(policy.ca(), () -> loadCa(policy.ca()));
        CompletableFuture<UpstreamTls> upstreamTlsLater = head.upstreamTlsFor(policy.upstream(),
                () -> UpstreamTls.context(policy.upstream()));
        CompletableFuture<AuditKey> auditKeyLater = options.auditKey() != null
                ? CompletableFuture.completedFuture(options.auditKey())
                : HeadStart.background("audit-key", () -> AuditKey.inStateFolder(StateDirectory.resolve()));
        ProxyMetrics metrics = null;
        SecretStore store = null;
        AuditLog audit = null;
        try {
            Placeholders placeholders = options.placeholders() != null ? options.placeholders()
                    : Placeholders.deferred(StateDirectory.resolve());
            store = SecretStore.load(policy.secrets(), placeholders, System::getenv, clock);  // one line a problem
            metrics = await(metricsLater);
            audit = AuditLog.open(policy.audit(), clock, metrics, policy.proxy().limits().maxConnections(),
                    await(auditKeyLater));
        } catch (Exception | Error e) {
            if (store != null) {
                store.close();
            }
            metricsLater.thenAccept(ProxyMetrics::close);
            settle(caLater);
            settle(auditKeyLater);
            throw e;
        }
        ProxyEventListener events = options.extraListener() == null ? ProxyEventListener.all(audit, metrics)
                : ProxyEventListener.all(audit, metrics, options.extraListener());
        PolicyHolder holder = new PolicyHolder(new Snapshot(PolicyEngine.compile(policy), store), policy.source(),
                events, clock);
        try {
            if (policy.source() != null) {
                holder.watchFileAndSighup();
                warnIfAuditBesidePolicy(policy);
            }
            return start(options, holder, audit, metrics, clock, new Prepared(await(caLater),
                    await(upstreamTlsLater), await(head.leafKeys), await(head.serverTls)));
        } catch (Exception | Error e) {
            holder.close();
            holder.wipeSecrets();
            audit.close();
            metrics.close();
            settle(caLater);
            throw e;
        }
    }

    /** What the background tasks of a start made: the CA, the upstream TLS context, the leaf keys, the server TLS. */
    private record Prepared(CertificateAuthority ca, UpstreamTls upstreamTls, KeyPair leafKeys,
                            ServerContexts serverTls) {}

    /**
     * Waits for a background task to end, whatever its outcome: a failing start must not exit the JVM while
     * the CA thread is writing a new CA's files (a key without its certificate would stop every later start).
     */
    private static void settle(CompletableFuture<?> later) {
        try {
            later.get();
        } catch (ExecutionException e) {
            // its failure is not the one being reported
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The value of a background task, or the exception it threw, as thrown. */
    private static <T> T await(CompletableFuture<T> later) throws Exception {
        try {
            return later.get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case Exception cause -> throw cause;
                case Error cause -> throw cause;
                default -> throw e;
            }
        }
    }

    @SuppressWarnings("checkstyle:ParameterNumber")
    private static SallyportProxy start(ProxyOptions options, PolicyHolder holder, AuditLog audit, ProxyMetrics metrics,
                                        InstantSource clock, Prepared prepared)
            throws Exception {
        Policy policy = holder.current().policy();
        metrics.namedIdentities(() -> holder.current().policy().proxy().metricsIdentities());
        CertificateAuthority ca = prepared.ca();
        DefaultChannelGroup channels = new DefaultChannelGroup("sallyport-clients", GlobalEventExecutor.INSTANCE);
        ProxyEventListener others = options.extraListener() == null ? metrics
                : ProxyEventListener.all(metrics, options.extraListener());
        ProxyContext context = new ProxyContext(holder::snapshot, audit, others, clock, channels);
        ExecutorService mintExecutor = Executors.newFixedThreadPool(2, Thread.ofPlatform().daemon()
                .name("sallyport-mint-", 0).factory());
        LeafMinter minter = new LeafMinter(ca, prepared.leafKeys(), mintExecutor, clock, new MintListener() {
            @Override
            public void minted(String host, Duration took) {
                context.emit(new ProxyEvent.CertMinted(clock.instant(), host, took));
            }

            @Override
            public void cacheHit(String host) {
                context.emit(new ProxyEvent.CertCacheHit(clock.instant(), host));
            }
        });
        ExecutorService dnsExecutor = Executors.newVirtualThreadPerTaskExecutor();
        Resolver resolver = options.resolver() != null ? options.resolver() : Resolver.system(dnsExecutor);
        ParentProxy parent = policy.upstream().proxy() == null ? null
                : ParentProxy.of(policy.upstream().proxy(), System.getenv());
        UpstreamConnector connector = new UpstreamConnector(context, resolver::resolve, prepared.upstreamTls(),
                parent);
        HostPort listen = options.listenOverride() != null ? options.listenOverride() : policy.proxy().listen();
        EventLoopGroup group = Transports.group(0);
        ProxyOptions.Capture capture = options.capture() != null ? options.capture()
                : options.listenOverride() != null ? null : ProxyOptions.Capture.of(policy.proxy()).orElse(null);
        // one table of mappings for the stub's own listeners and for registered sandboxes' relayed DNS, the
        // sandboxes' own mappings going with their registrations
        SyntheticAddresses addresses = new SyntheticAddresses(DNS_TABLE, DNS_MAPPINGS, DNS_RESERVE,
                context.sandboxes()::count, DNS_LIFETIME, Ticker.systemTicker());
        LookupAudit lookups = new LookupAudit(context::emit, clock, DNS_AUDIT_BURST, DNS_AUDIT_PER_SECOND);
        context.sandboxes().onForgotten(identity -> {
            addresses.forget(identity);
            lookups.forget(identity.name());
        });
        DnsStub stub = new DnsStub(holder::current, addresses, lookups, capture == null || !capture.ipv6Answers()
                ? DnsStub.Families.IPV4 : capture.source() == OriginalDestination.CONNECTION_TRACKING
                ? DnsStub.Families.ASKER_FAMILY : DnsStub.Families.BOTH);
        try {
            // lookups the rate limit left out are counted within a second, even when no lookup follows
            group.next().scheduleAtFixedRate(lookups::flushSuppressed, 1, 1, TimeUnit.SECONDS);
            Channel server = clientListener(group, new FrontendInitializer(context, new ExchangeCore(context,
                    connector), connector, minter, prepared.serverTls(), stub))
                    .bind(listen.host(), listen.port()).sync().channel();
            LOGGER.info("proxy listening address={} transport={} tls={}", server.localAddress(),
                    Transports.nativeTransport() ? "epoll" : "nio", Transports.sslProvider());
            context.addSelf((InetSocketAddress) server.localAddress());
            HostPort adminBind = options.adminOverride() != null ? options.adminOverride() : policy.proxy().admin();
            String token = AdminServer.configuredToken(policy.proxy(), System.getenv()).orElse(null);
            AtomicReference<Boolean> closed = new AtomicReference<>(false);
            AdminServer admin = AdminServer.start(adminBind, group, metrics, holder, () -> !closed.get(), audit,
                    token, context.sandboxes(), refusal -> audit(context, refusal));
            context.addSelf(admin.address());
            // a lease that ran out closes its sandbox's connections within a second (the group's end stops this)
            group.scheduleAtFixedRate(context.sandboxes()::sweep, 1, 1, TimeUnit.SECONDS);
            SallyportProxy proxy = new SallyportProxy(context, group, server, admin, holder, audit, metrics, closed,
                    ca, minter, mintExecutor, dnsExecutor, connector, stub);
            if (capture != null) {
                proxy.startCapture(capture, prepared);
            }
            return proxy;
        } catch (Exception e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            minter.close();
            mintExecutor.shutdownNow();
            dnsExecutor.shutdownNow();
            throw e;
        }
    }

    /** A listener for clients (the proxy's, the transparent one): reads driven by the pipeline, accepts paused on
     * failure (descriptors exhausted). */
    private static ServerBootstrap clientListener(EventLoopGroup group, FrontendInitializer child) {
        return new ServerBootstrap()
                .group(group)
                .channel(Transports.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .handler(new AcceptPause())
                .childOption(ChannelOption.AUTO_READ, false)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(child);
    }

    /** The DNS stub's listeners and the transparent listener {@code capture} asks for, sharing one table of mappings. */
    private void startCapture(ProxyOptions.Capture capture, Prepared prepared) throws InterruptedException {
        if (capture.dns() != null) {
            HostPort bind = capture.dns();
            dns = DnsServer.start(new InetSocketAddress(bind.host(), bind.port()), group, stub,
                    ch -> ConnectionSlot.admitWithoutAnswer(context, ch));
            LOGGER.info("dns stub listening address={} (udp and tcp)", dns.address());
            context.addSelf(dns.address());
        }
        HostPort bind = capture.transparent();
        if (bind == null) {
            return;
        }
        if (!capture.source().readable()) {
            throw new IllegalStateException("proxy.transparent: " + bind + ": the original destination of a "
                    + "redirected connection cannot be read here (expected: Linux with the epoll transport, and the "
                    + "JVM run with --enable-native-access=ALL-UNNAMED, as bin/sallyport does)");
        }
        transparent = clientListener(group, new FrontendInitializer(context, core, connector, minter,
                prepared.serverTls(), stub, stub.addresses(), capture.source()))
                .bind(bind.host(), bind.port()).sync().channel();
        context.addSelf((InetSocketAddress) transparent.localAddress());
        LOGGER.info("transparent listener address={} destination={}", transparent.localAddress(),
                capture.source().name().toLowerCase(java.util.Locale.ROOT));
    }

    /** The policy's folder is watched for changes: an audit log there wakes the watcher on every write. */
    private static void warnIfAuditBesidePolicy(Policy policy) {
        if (policy.audit().isStdout()) {
            return;
        }
        Path audit = Path.of(policy.audit().path()).toAbsolutePath();
        Path folder = policy.source().toAbsolutePath().getParent();
        if (folder != null && folder.equals(audit.getParent())) {
            LOGGER.warn("audit log {} is in the policy's folder {}, which is watched for policy changes: every "
                    + "audit write wakes the watcher (expected: the audit log in another folder)", audit, folder);
        }
    }

    static CertificateAuthority loadCa(CaSettings settings) throws CaException {
        if (settings.cert() != null && settings.key() != null) {
            return CertificateAuthority.load(settings.cert(), settings.key());
        }
        return CertificateAuthority.loadOrInit(stateCaFolder());
    }

    /** The CA folder used when the policy names no CA files: where {@code sallyport ca init} puts it. */
    static Path stateCaFolder() {
        return StateDirectory.resolve().resolve("ca");
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    /** Where the DNS stub answers (UDP and TCP), when {@link ProxyOptions#withDns} asked for it. */
    public java.util.Optional<InetSocketAddress> dnsAddress() {
        DnsServer d = dns;
        return d == null ? java.util.Optional.empty() : java.util.Optional.of(d.address());
    }

    /** Where transparent connections (PROXY v2 header first) are accepted, when {@link ProxyOptions.Capture} asked. */
    public java.util.Optional<InetSocketAddress> transparentAddress() {
        Channel t = transparent;
        return t == null ? java.util.Optional.empty() : java.util.Optional.of((InetSocketAddress) t.localAddress());
    }

    public InetSocketAddress adminAddress() {
        return admin.address();
    }

    /** The metrics registry behind {@code /metrics}. */
    public ProxyMetrics metrics() {
        return metrics;
    }

    /**
     * Audits what a runner refused on the host for a sandbox this proxy serves, before any byte reached it (a spoofed
     * source on a VM sandbox's bridge): a denied {@code connection} record from {@code refusal.source()}, under
     * {@code refusal.identity()}. A runner with a proxy of its own reports here; one attached to a shared proxy, through
     * the admin listener ({@code POST /sandboxes/NAME/refused}).
     */
    public void refused(ReportedRefusal refusal) {
        audit(context, refusal);
    }

    private static void audit(ProxyContext context, ReportedRefusal refusal) {
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection",
                new AuditRecord(context.nextId(), refusal.source()).identity(refusal.identity())
                        .denied(refusal.reason()).fields()));
    }

    /** The policy holder ({@code POST /reload}, SIGHUP and file changes swap its engine). */
    public PolicyHolder policies() {
        return holder;
    }

    /** The secret store in force (swapped with the policy, as one snapshot, on reload). */
    public SecretStore secrets() {
        return holder.snapshot().secrets();
    }

    /**
     * The exchange core this proxy's front ends feed: a front end of the proxy's own (or a test's) hands it requests
     * and gets every stage (decision, dial check, secrets, scrubbing, audit) without writing one.
     */
    ExchangeCore core() {
        return core;
    }

    /** Blocks until every audit record queued so far is written. */
    public void flushAudit() {
        audit.flush();
    }

    /** The key that signs the audit log's checkpoints. */
    public AuditKey auditKey() {
        return audit.key();
    }

    public CertificateAuthority ca() {
        return ca;
    }

    /** Stops accepting, drains open exchanges up to {@code timeouts.shutdownGrace}, then releases everything. */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        context.startDraining();
        server.close().syncUninterruptibly();
        DnsServer d = dns;
        if (d != null) {
            d.close();
        }
        Channel t = transparent;
        if (t != null) {
            t.close().syncUninterruptibly();
        }
        admin.close();
        holder.close();
        long grace = context.policy().proxy().timeouts().shutdownGrace().toNanos();
        try {
            if (!context.awaitNoExchanges(System.nanoTime() + grace)) {
                LOGGER.warn("shutdown grace over open_exchanges={}", context.openExchanges());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.channels().close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.submit(connector::close).awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        minter.close();
        mintExecutor.shutdownNow();
        dnsExecutor.shutdownNow();
        holder.wipeSecrets();
        audit.close();
        metrics.close();
    }

    public void awaitTermination() throws InterruptedException {
        server.closeFuture().sync();
        group.terminationFuture().sync();
    }
}
