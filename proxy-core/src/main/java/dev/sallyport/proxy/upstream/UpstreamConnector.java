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
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
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
    private final UpstreamTls tls;
    private final UpstreamPool pool = new UpstreamPool();
    private final Http2Upstreams h2;

    public UpstreamConnector(ProxyContext context, HostLookup resolver, UpstreamTls tls) {
        this.context = context;
        this.resolver = resolver;
        this.tls = tls;
        this.h2 = new Http2Upstreams(value -> context.snapshot().secrets().holdsRealValue(value));
    }

    /**
     * Completes on {@code loop}; fails with {@link UpstreamFailure}. {@code engine} is the policy the exchange was
     * decided by: its {@code network.deny} checks the address. {@code client} names the hop in errors.
     */
    @Override
    public Future<UpstreamLease> acquire(Destination asked, PolicyEngine engine, EventLoop loop, String client) {
        Promise<UpstreamLease> promise = loop.newPromise();
        // a server that refused http/1.1 in ALPN gets an HTTP/1.1 client's exchanges as HTTP/2 streams
        Destination dest = asked.mayFallBackToH2() && h2.onlyH2(asked) ? asked.withH2() : asked;
        String hop = "client " + client + " => " + dest.text() + ": ";
        if (dest.h2() && streamOnPooled(dest, engine, loop, hop, promise)) {
            return promise;
        }
        if (dest.http() && (!dest.h2() || Boolean.FALSE.equals(h2.remembered(dest)))
                && reuse(dest, engine, loop, promise)) {
            return promise;
        }
        lookupAndDial(dest, engine, loop, hop, promise);
        return promise;
    }

    private void lookupAndDial(Destination dest, PolicyEngine engine, EventLoop loop, String hop,
                               Promise<UpstreamLease> promise) {
        Timeouts timeouts = context.policy().proxy().timeouts();
        Optional<IpAddress> literal = IpAddress.parseStrict(dest.host());
        if (literal.isPresent()) {
            dial(dest, engine, List.of(literal.get().toInetAddress()), loop, hop, promise);
            return;
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
    }

    /**
     * Completes {@code promise} with a stream of a pooled HTTP/2 connection, or of the one being dialed for the
     * destination (which then serves every exchange that waited for it, as far as the server allows streams).
     */
    private boolean streamOnPooled(Destination dest, PolicyEngine engine, EventLoop loop, String hop,
                                   Promise<UpstreamLease> promise) {
        Http2Upstreams.Key key = Http2Upstreams.key(loop, dest);
        Http2Upstreams.Parent parent = h2.pooled(key, dest, engine);
        if (parent != null) {
            openStream(parent, dest, hop, true, promise);
            return true;
        }
        Future<Http2Upstreams.Parent> pending = h2.dialing(key);
        if (pending == null) {
            return false;
        }
        pending.addListener(f -> {
            Http2Upstreams.Parent dialed = f.isSuccess() ? (Http2Upstreams.Parent) f.getNow() : null;
            if (dialed != null && dialed.open() && dialed.hasRoom()
                    && engine.onDial(dest.host(), dest.port(), dialed.address()).permitsTraffic()) {
                openStream(dialed, dest, hop, true, promise);
            } else if (f.cause() instanceof UpstreamFailure failure) {
                promise.tryFailure(failure);
            } else {
                lookupAndDial(dest, engine, loop, hop, promise);  // the server chose HTTP/1.1, or has no room
            }
        });
        return true;
    }

    private void openStream(Http2Upstreams.Parent parent, Destination dest, String hop, boolean reused,
                            Promise<UpstreamLease> promise) {
        Http2Upstreams.openStream(parent, context.policy().proxy().timeouts()).addListener(f -> {
            Http2StreamChannel stream = f.isSuccess() ? (Http2StreamChannel) f.getNow() : null;
            if (stream == null) {
                promise.tryFailure(new UpstreamFailure(502, "upstream_failed", hop + "opening an HTTP/2 stream"
                        + " failed: " + rootMessage(f.cause()), parent.address().toString()));
            } else if (!promise.trySuccess(new UpstreamLease(stream, parent.address(), dest, reused,
                    UpstreamLease.H2))) {
                stream.close();
            }
        });
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
        if (lease.h2()) {
            ch.close();     // the stream: reset (CANCEL) unless both sides ended it; its connection stays pooled
            return;
        }
        if (!reusable || !ch.isActive() || !lease.destination().http() || !UpstreamCodec.inStep(ch)) {
            ch.close();
            return;
        }
        Destination d = lease.destination();
        pool.offer(new UpstreamPool.Key(ch.eventLoop(), d.host(), d.port(), d.tls()), ch, lease.address());
    }

    public void close() {
        pool.closeAll();
        h2.closeAll();
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
                .handler(new UpstreamInitializer(dest, dest.h2() ? tls.alpn() : tls.http1(), timeouts))
                .connect(new InetSocketAddress(chosen.toInetAddress(), dest.port()));
        Promise<Http2Upstreams.Parent> parentPromise = null;
        if (dest.h2() && Boolean.TRUE.equals(h2.remembered(dest))) {
            Http2Upstreams.Key key = Http2Upstreams.key(loop, dest);
            if (h2.dialing(key) == null) {      // exchanges that come meanwhile wait for this connection
                parentPromise = loop.newPromise();
                h2.dialStarted(key, parentPromise);
            }
        }
        Promise<Http2Upstreams.Parent> parentReady = parentPromise;
        if (parentReady != null) {
            promise.addListener(p -> {
                if (!p.isSuccess()) {
                    parentReady.tryFailure(p.cause());
                } else if (!((UpstreamLease) p.getNow()).h2()) {
                    parentReady.tryFailure(new IllegalStateException("the server chose HTTP/1.1"));
                }
            });
        }
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
                if (h.isSuccess() && dest.h2()) {
                    boolean speaksH2 = ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol());
                    h2.remember(dest, speaksH2);
                    if (speaksH2) {
                        Http2Upstreams.Parent parent = h2.becomeHttp2(Http2Upstreams.key(loop, dest), ch, chosen,
                                timeouts);
                        emitConnected(dest, started);
                        if (parentReady != null) {
                            parentReady.trySuccess(parent);
                        }
                        openStream(parent, dest, hop, false, promise);
                        return;
                    }
                }
                if (h.isSuccess()) {
                    connected(dest, ch, chosen, started, promise);
                } else if (dest.mayFallBackToH2() && refusedHttp1(h.cause())) {
                    h2.rememberOnlyH2(dest);    // nothing was sent: the exchange goes again, over HTTP/2
                    dial(dest.withH2(), engine, addresses, loop, hop, promise);
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
            emitConnected(dest, started);
        }
    }

    private void emitConnected(Destination dest, long started) {
        context.emit(new ProxyEvent.UpstreamConnected(context.clock().instant(), dest.host(),
                Duration.ofNanos(System.nanoTime() - started)));
    }

    /** True when the server's TLS alert said it speaks none of the protocols offered (RFC 7301, section 3.2). */
    static boolean refusedHttp1(Throwable t) {
        String message = rootMessage(t).toLowerCase(Locale.ROOT);
        return message.contains("no_application_protocol") || message.contains("no application protocol");
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
