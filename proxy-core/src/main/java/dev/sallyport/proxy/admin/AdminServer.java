package dev.sallyport.proxy.admin;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.ProxySettings;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.identity.ReportedRefusal;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.internal.AcceptPause;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.proxy.reload.PolicyHolder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener: {@code GET /metrics} (Prometheus text), {@code GET /healthz}, {@code GET /readyz} and
 * {@code POST /reload} and the sandbox registrations of {@link SandboxEndpoints} (bearer token). It binds only where told (default {@code 127.0.0.1:9901}) and runs on
 * the event loop group it is given; scraping and reloading run on its own single thread.
 */
public final class AdminServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminServer.class);

    private final Channel channel;
    private final ExecutorService slow;

    private AdminServer(Channel channel, ExecutorService slow) {
        this.channel = channel;
        this.slow = slow;
    }

    /**
     * Binds the admin listener. {@code ready} is the data path's readiness; {@code reloadToken} null means
     * {@code POST /reload} answers 403 (see {@link #configuredToken}).
     */
    public static AdminServer start(HostPort bind, EventLoopGroup group, ProxyMetrics metrics, PolicyHolder policies,
                                    BooleanSupplier ready, String reloadToken) throws InterruptedException {
        return start(bind, group, metrics, policies, ready, null, reloadToken);
    }

    /** As above; {@code audit} (nullable) also makes {@code /readyz} answer 503 while the audit log is failing. */
    public static AdminServer start(HostPort bind, EventLoopGroup group, ProxyMetrics metrics, PolicyHolder policies,
                                    BooleanSupplier ready, AuditLog audit, String reloadToken)
            throws InterruptedException {
        return start(bind, group, metrics, policies, ready, audit, reloadToken, null, refusal -> { });
    }

    /**
     * As above; with {@code sandboxes} (nullable), runners register their sandboxes at {@code /sandboxes}, and what
     * they report refusing for one goes to {@code refusals} (to be audited).
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public static AdminServer start(HostPort bind, EventLoopGroup group, ProxyMetrics metrics, PolicyHolder policies,
                                    BooleanSupplier ready, AuditLog audit, String reloadToken,
                                    SandboxRegistry sandboxes, Consumer<ReportedRefusal> refusals)
            throws InterruptedException {
        Supplier<Optional<String>> notReady = () -> {
            if (!ready.getAsBoolean()) {
                return Optional.of("the proxy is not ready to take traffic");
            }
            if (audit != null && !audit.accepting()) {
                return Optional.of("the audit log is not accepting records (see stderr)");
            }
            return Optional.empty();
        };
        AdminEndpoints endpoints = new AdminEndpoints(metrics::scrape, policies::reload, notReady,
                reloadToken == null ? null : new AdminToken(reloadToken),
                sandboxes == null ? null : new SandboxEndpoints(sandboxes, policies::snapshot, refusals));
        return start(new InetSocketAddress(bind.host(), bind.port()), group, endpoints);
    }

    /**
     * The reload token the policy names ({@code proxy.admin_token: {env: NAME}} or {@code {file: PATH}}), read
     * now; empty when none is configured. Throws IllegalArgumentException (one line, no token in it) when it
     * is configured but missing or empty: fail closed rather than run with reload open or silently off.
     */
    public static Optional<String> configuredToken(ProxySettings settings, Map<String, String> environment) {
        if (settings.adminTokenEnv() != null) {
            String value = environment.get(settings.adminTokenEnv());
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("proxy.admin_token.env: environment variable "
                        + settings.adminTokenEnv() + " is unset or empty (expected: the admin token)");
            }
            return Optional.of(value.strip());
        }
        if (settings.adminTokenFile() != null) {
            try {
                String value = Files.readString(settings.adminTokenFile()).strip();
                if (value.isEmpty()) {
                    throw new IllegalArgumentException("proxy.admin_token.file: " + settings.adminTokenFile()
                            + " is empty (expected: the admin token)");
                }
                return Optional.of(value);
            } catch (IOException e) {
                throw new IllegalArgumentException("proxy.admin_token.file: cannot read " + settings.adminTokenFile()
                        + ": " + e.getClass().getSimpleName() + " (expected: a readable file holding the token)");
            }
        }
        return Optional.empty();
    }

    static AdminServer start(InetSocketAddress bind, EventLoopGroup group, AdminEndpoints endpoints)
            throws InterruptedException {
        ExecutorService slow = Executors.newSingleThreadExecutor(
                Thread.ofPlatform().name("sallyport-admin").daemon().factory());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(serverChannelFor(group))
                .option(ChannelOption.SO_REUSEADDR, true)
                .handler(new AcceptPause())
                .childHandler(new AdminInitializer(new AdminHandler(endpoints, slow)));
        var future = bootstrap.bind(bind).await();
        if (!future.isSuccess()) {
            slow.shutdownNow();
            Throwable cause = future.cause();
            String why = cause instanceof BindException ? cause.getMessage() : String.valueOf(cause);
            String message = "proxy.admin: cannot listen on " + hostPort(bind) + ": " + why
                    + " (expected: a free local address and port)";
            BindException bindException = new BindException(message);
            bindException.initCause(cause);
            throw new UncheckedIOException(message, bindException);
        }
        AdminServer server = new AdminServer(future.channel(), slow);
        LOGGER.info("admin listening: address={}", hostPort(server.address()));
        return server;
    }

    /** Where the listener is bound (the real port when bound to port 0). */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Stops listening and waits for it; the event loop group stays with its owner. */
    @Override
    public void close() {
        channel.close().awaitUninterruptibly();
        slow.shutdownNow();
    }

    /** The server channel type matching the group's transport: NIO, or native epoll when that is what runs. */
    private static Class<? extends ServerChannel> serverChannelFor(EventLoopGroup group) {
        if (group instanceof IoEventLoopGroup io && !io.isIoType(NioIoHandler.class)) {
            try {
                Class<?> epollHandler = Class.forName("io.netty.channel.epoll.EpollIoHandler");
                if (io.isIoType(epollHandler.asSubclass(io.netty.channel.IoHandler.class))) {
                    return Class.forName("io.netty.channel.epoll.EpollServerSocketChannel")
                            .asSubclass(ServerChannel.class);
                }
            } catch (ClassNotFoundException e) {
                LOGGER.debug("epoll classes unavailable; using NIO for the admin listener", e);
            }
        }
        return NioServerSocketChannel.class;
    }

    private static String hostPort(InetSocketAddress a) {
        String host = a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
