package dev.sallyport.proxy.admin;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener: {@code GET /metrics} (Prometheus text), {@code GET /healthz}, {@code GET /readyz} and
 * {@code POST /reload} (bearer token). It binds only where told (default {@code 127.0.0.1:9901}) and runs on
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

    static AdminServer start(InetSocketAddress bind, EventLoopGroup group, AdminEndpoints endpoints)
            throws InterruptedException {
        ExecutorService slow = Executors.newSingleThreadExecutor(
                Thread.ofPlatform().name("sallyport-admin").daemon().factory());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(serverChannelFor(group))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new AdminInitializer(new AdminHandler(endpoints, slow)));
        var future = bootstrap.bind(bind).await();
        if (!future.isSuccess()) {
            slow.shutdownNow();
            Throwable cause = future.cause();
            String why = cause instanceof BindException ? cause.getMessage() : String.valueOf(cause);
            throw new UncheckedIOException(new BindException("proxy.admin: cannot listen on " + hostPort(bind) + ": "
                    + why + " (expected: a free local address and port)"));
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
