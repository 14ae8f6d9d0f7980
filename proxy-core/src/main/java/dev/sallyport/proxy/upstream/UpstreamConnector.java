package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.IpAddress;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.Timeouts;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.Transports;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Gets an upstream connection for a destination. Resolves through the {@link HostLookup}, checks EVERY address
 * with {@code onDial}: if any address of a name is denied, the whole request is denied ({@code private_address},
 * fail closed: a name that mixes public and private addresses is a rebinding shape). Then dials exactly the
 * first checked address, never re-resolving. A keep-alive request first reuses an idle connection to the same
 * destination, without a lookup, once the address that connection dialed passes {@code onDial} again under the
 * policy in force (a policy reload can take an address away; such a connection is closed, not reused).
 */
public final class UpstreamConnector implements Dialer {

    private final ProxyContext context;
    private final HostLookup resolver;
    private final SslContext tls;
    private final UpstreamPool pool = new UpstreamPool();

    public UpstreamConnector(ProxyContext context, HostLookup resolver, SslContext tls) {
        this.context = context;
        this.resolver = resolver;
        this.tls = tls;
    }

    /**
     * Completes on {@code loop}; fails with {@link UpstreamFailure}. {@code engine} is the policy the exchange was
     * decided by: its {@code network.deny} checks the address. {@code client} names the hop in errors.
     */
    @Override
    public Future<UpstreamLease> acquire(Destination dest, PolicyEngine engine, EventLoop loop, String client) {
        Promise<UpstreamLease> promise = loop.newPromise();
        if (dest.http() && reuse(dest, engine, loop, promise)) {
            return promise;
        }
        String hop = "client " + client + " => " + dest.text() + ": ";
        Timeouts timeouts = context.policy().proxy().timeouts();
        Optional<IpAddress> literal = IpAddress.parseStrict(dest.host());
        if (literal.isPresent()) {
            dial(dest, engine, List.of(literal.get().toInetAddress()), loop, hop, promise);
            return promise;
        }
        ScheduledFuture<?> timer = loop.schedule(() -> promise.tryFailure(new UpstreamFailure(504, "dns_timeout",
                hop + "DNS lookup timed out after " + timeouts.connect().toMillis() + " ms", null)),
                timeouts.connect().toNanos(), TimeUnit.NANOSECONDS);
        resolver.lookup(dest.host()).whenComplete((addresses, error) -> loop.execute(() -> {
            timer.cancel(false);
            if (promise.isDone()) {
                return;
            }
            if (error != null || addresses == null || addresses.isEmpty()) {
                promise.tryFailure(new UpstreamFailure(502, "dns_failed", hop + "DNS lookup failed: "
                        + (error == null ? "no addresses" : rootMessage(error)), null));
                return;
            }
            dial(dest, engine, addresses, loop, hop, promise);
        }));
        return promise;
    }

    /** Completes {@code promise} with an idle pooled connection whose address the policy still allows. */
    private boolean reuse(Destination dest, PolicyEngine engine, EventLoop loop, Promise<UpstreamLease> promise) {
        UpstreamPool.Key key = new UpstreamPool.Key(loop, dest.host(), dest.port(), dest.tls());
        UpstreamPool.Idle parked;
        while ((parked = pool.poll(key)) != null) {
            IpAddress address = parked.address();
            // the proxy's own listeners do not change, and dial() refused them: only the policy can have moved
            if (engine.onDial(dest.host(), dest.port(), address).permitsTraffic()) {
                return promise.trySuccess(new UpstreamLease(parked.channel(), address, dest, true));
            }
            parked.channel().close();
        }
        return false;
    }

    /**
     * Returns a connection after a complete exchange; closes it unless {@code reusable} and still in step (every
     * request answered by exactly one response that ended at its framed length, nothing more received).
     */
    @Override
    public void release(UpstreamLease lease, boolean reusable) {
        Channel ch = lease.channel();
        if (!reusable || !ch.isActive() || !lease.destination().http() || !UpstreamCodec.inStep(ch)) {
            ch.close();
            return;
        }
        Destination d = lease.destination();
        pool.offer(new UpstreamPool.Key(ch.eventLoop(), d.host(), d.port(), d.tls()), ch, lease.address());
    }

    public void close() {
        pool.closeAll();
    }

    private void dial(Destination dest, PolicyEngine engine, List<InetAddress> addresses, EventLoop loop, String hop,
                      Promise<UpstreamLease> promise) {
        for (InetAddress address : addresses) {
            IpAddress ip = IpAddress.of(address);
            Decision decision = engine.onDial(dest.host(), dest.port(), ip);
            if (!decision.permitsTraffic()) {
                promise.tryFailure(new UpstreamFailure(403, decision.reason(), hop + "address " + ip
                        + " is denied by network.deny (" + decision.reason() + ")", ip.toString()));
                return;
            }
        }
        IpAddress chosen = IpAddress.of(addresses.getFirst());
        String ipText = chosen.toString();
        if (context.isSelf(chosen.toInetAddress(), dest.port())) {
            promise.tryFailure(new UpstreamFailure(403, "proxy_self", hop + "address " + ipText + ":" + dest.port()
                    + " is this proxy's own listener", ipText));
            return;
        }
        Timeouts timeouts = context.policy().proxy().timeouts();
        long started = System.nanoTime();
        ChannelFuture connect = new Bootstrap()
                .group(loop)
                .channel(Transports.socketChannel())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
                        timeouts.connect().toMillis()))
                .handler(new UpstreamInitializer(dest, tls, timeouts))
                .connect(new InetSocketAddress(chosen.toInetAddress(), dest.port()));
        connect.addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                boolean timeout = f.cause() instanceof ConnectTimeoutException;
                promise.tryFailure(new UpstreamFailure(timeout ? 504 : 502,
                        timeout ? "upstream_connect_timeout" : "upstream_connect_failed",
                        hop + "upstream connect to " + ipText + " failed: " + rootMessage(f.cause()), ipText));
                return;
            }
            Channel ch = f.channel();
            promise.addListener(p -> {
                if (!p.isSuccess()) {
                    ch.close();
                }
            });
            SslHandler ssl = ch.pipeline().get(SslHandler.class);
            if (ssl == null) {
                connected(dest, ch, chosen, started, promise);
                return;
            }
            ch.read();
            ssl.handshakeFuture().addListener(h -> {
                if (h.isSuccess()) {
                    connected(dest, ch, chosen, started, promise);
                } else {
                    boolean timeout = h.cause() instanceof SslHandshakeTimeoutException;
                    promise.tryFailure(new UpstreamFailure(timeout ? 504 : 502,
                            timeout ? "upstream_tls_timeout" : "upstream_tls_failed",
                            hop + "upstream TLS handshake failed: " + rootMessage(h.cause()), ipText));
                }
            });
        });
    }

    private void connected(Destination dest, Channel ch, IpAddress address, long started,
                           Promise<UpstreamLease> promise) {
        if (promise.trySuccess(new UpstreamLease(ch, address, dest, false))) {
            context.emit(new ProxyEvent.UpstreamConnected(context.clock().instant(), dest.host(),
                    Duration.ofNanos(System.nanoTime() - started)));
        }
    }

    static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return message == null ? root.getClass().getSimpleName() : message.lines().findFirst().orElse("");
    }
}
