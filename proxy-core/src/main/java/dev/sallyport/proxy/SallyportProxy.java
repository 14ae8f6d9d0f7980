package dev.sallyport.proxy;

import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.LeafMinter;
import dev.sallyport.ca.MintListener;
import dev.sallyport.policy.CaSettings;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.connect.FrontendInitializer;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.Transports;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import dev.sallyport.proxy.upstream.UpstreamTls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running proxy: binds the listener, builds the CA minter, the upstream connector and the per-connection
 * pipeline. {@link #close()} stops accepting, lets open exchanges finish for {@code timeouts.shutdownGrace},
 * then closes everything.
 */
public final class SallyportProxy implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(SallyportProxy.class);

    private final ProxyContext context;
    private final EventLoopGroup group;
    private final Channel server;
    private final CertificateAuthority ca;
    private final LeafMinter minter;
    private final ExecutorService mintExecutor;
    private final ExecutorService dnsExecutor;
    private final UpstreamConnector connector;
    private final AtomicReference<Boolean> closed = new AtomicReference<>(false);

    private SallyportProxy(ProxyContext context, EventLoopGroup group, Channel server, CertificateAuthority ca,
                           LeafMinter minter, ExecutorService mintExecutor, ExecutorService dnsExecutor,
                           UpstreamConnector connector) {
        this.context = context;
        this.group = group;
        this.server = server;
        this.ca = ca;
        this.minter = minter;
        this.mintExecutor = mintExecutor;
        this.dnsExecutor = dnsExecutor;
        this.connector = connector;
    }

    public static SallyportProxy start(ProxyOptions options) throws Exception {
        PolicyEngine engine = PolicyEngine.compile(options.policy());
        return start(options, () -> engine, true);
    }

    /** Starts with a policy supplier (the reload holder); {@code auditAccepting} gates new requests. */
    public static SallyportProxy start(ProxyOptions options, Supplier<PolicyEngine> policies, boolean unused)
            throws Exception {
        Policy policy = policies.get().policy();
        InstantSource clock = InstantSource.system();
        ProxyEventListener events = options.extraListener() == null ? e -> { } : options.extraListener();
        DefaultChannelGroup channels = new DefaultChannelGroup("sallyport-clients", GlobalEventExecutor.INSTANCE);
        ProxyContext context = new ProxyContext(policies, events, clock, () -> true, channels);
        CertificateAuthority ca = options.ca() != null ? options.ca() : loadCa(policy.ca());
        ExecutorService mintExecutor = Executors.newFixedThreadPool(2, Thread.ofPlatform().daemon()
                .name("sallyport-mint-", 0).factory());
        LeafMinter minter = new LeafMinter(ca, mintExecutor, clock, new MintListener() {
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
        UpstreamConnector connector = new UpstreamConnector(context, resolver, UpstreamTls.context(policy.upstream()));
        HostPort listen = options.listenOverride() != null ? options.listenOverride() : policy.proxy().listen();
        EventLoopGroup group = Transports.group(0);
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(Transports.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.AUTO_READ, false)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new FrontendInitializer(context, connector, minter))
                    .bind(listen.host(), listen.port()).sync().channel();
            LOGGER.info("proxy listening address={} transport={} tls={}", server.localAddress(),
                    Transports.nativeTransport() ? "epoll" : "nio", Transports.sslProvider());
            return new SallyportProxy(context, group, server, ca, minter, mintExecutor, dnsExecutor, connector);
        } catch (Exception e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            minter.close();
            mintExecutor.shutdownNow();
            dnsExecutor.shutdownNow();
            throw e;
        }
    }

    private static CertificateAuthority loadCa(CaSettings settings) throws CaException {
        if (settings.cert() != null && settings.key() != null) {
            return CertificateAuthority.load(settings.cert(), settings.key());
        }
        return CertificateAuthority.loadOrInit(StateDirectory.resolve());
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    /** The admin listener's address, or null when this build runs without one. */
    public InetSocketAddress adminAddress() {
        return null;
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
    }

    public void awaitTermination() throws InterruptedException {
        server.closeFuture().sync();
        group.terminationFuture().sync();
    }
}
