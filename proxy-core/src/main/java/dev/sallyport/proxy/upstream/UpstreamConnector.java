package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.HostPort;
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
import java.util.function.Consumer;

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
    private final ParentProxy parent;       // nullable: every destination is dialed directly

    public UpstreamConnector(ProxyContext context, HostLookup resolver, UpstreamTls tls) {
        this(context, resolver, tls, null);
    }

    /** {@code parent} (nullable): the parent proxy of {@code upstream.proxy}, fixed for the proxy's life. */
    public UpstreamConnector(ProxyContext context, HostLookup resolver, UpstreamTls tls, ParentProxy parent) {
        this.context = context;
        this.resolver = resolver;
        this.tls = tls;
        this.parent = parent;
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
        Hop hop = new Hop(client, dest);
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

    private void lookupAndDial(Destination dest, PolicyEngine engine, EventLoop loop, Hop hop,
                               Promise<UpstreamLease> promise) {
        if (parent != null && parent.carries(dest)) {
            throughParent(dest, engine, loop, hop, promise);
            return;
        }
        resolve(dest.host(), DESTINATION, loop, hop, promise,
                addresses -> dial(dest, engine, addresses, loop, hop, promise));
    }

    /** What a failed lookup is called: the destination's own, or the parent proxy's. */
    private record Lookup(String whose, String timeoutReason, String failedReason) {
    }

    private static final Lookup DESTINATION = new Lookup("", "dns_timeout", "dns_failed");

    private void resolve(String host, Lookup lookup, EventLoop loop, Hop hop, Promise<UpstreamLease> promise,
                         Consumer<List<InetAddress>> then) {
        Optional<IpAddress> literal = IpAddress.parseStrict(host);
        if (literal.isPresent()) {
            then.accept(List.of(literal.get().toInetAddress()));
            return;
        }
        Timeouts timeouts = context.policy().proxy().timeouts();
        ScheduledFuture<?> timer = loop.schedule(() -> promise.tryFailure(new UpstreamFailure(504,
                lookup.timeoutReason(), hop + lookup.whose() + "DNS lookup timed out after "
                + timeouts.connect().toMillis() + " ms", null)), timeouts.connect().toNanos(), TimeUnit.NANOSECONDS);
        resolver.lookup(host).whenComplete((addresses, error) -> loop.execute(() -> {
            timer.cancel(false);
            if (promise.isDone()) {
                return;
            }
            if (error != null || addresses == null || addresses.isEmpty()) {
                promise.tryFailure(new UpstreamFailure(502, lookup.failedReason(), hop + lookup.whose()
                        + "DNS lookup failed: " + (error == null ? "no addresses" : rootMessage(error)), null));
                return;
            }
            then.accept(addresses);
        }));
    }

    /**
     * Through the parent proxy: the destination's name is the parent's to resolve (Sallyport never looks it up);
     * an IP literal destination is still checked with {@code onDial}. The parent's own address is exempt from
     * {@code network.deny} (a corporate proxy is usually on a private network), as the parent only: the same
     * address as a destination is checked like any other.
     */
    private void throughParent(Destination dest, PolicyEngine engine, EventLoop loop, Hop hop,
                               Promise<UpstreamLease> promise) {
        Optional<IpAddress> literal = IpAddress.parseStrict(dest.host());
        if (literal.isPresent() && denied(dest, engine, literal.get(), hop, promise)) {
            return;
        }
        HostPort at = parent.address();
        Lookup lookup = new Lookup("parent proxy " + at + ": ", ParentConnectHandler.TIMEOUT,
                ParentConnectHandler.CONNECT_FAILED);
        resolve(at.host(), lookup, loop, hop, promise, addresses -> {
            IpAddress chosen = IpAddress.of(addresses.getFirst());
            if (context.isSelf(chosen.toInetAddress(), at.port())) {
                promise.tryFailure(new UpstreamFailure(403, "proxy_self", hop + "parent proxy " + at + " ("
                        + chosen + ") is this proxy's own listener", chosen.toString()));
                return;
            }
            open(dest, chosen, at.port(), true, loop, hop, promise,
                    again -> throughParent(again, engine, loop, hop, promise));
        });
    }

    /** Fails {@code promise} and returns true when {@code network.deny} refuses {@code ip} for {@code dest}. */
    private static boolean denied(Destination dest, PolicyEngine engine, IpAddress ip, Hop hop,
                                  Promise<UpstreamLease> promise) {
        Decision decision = engine.onDial(dest.host(), dest.port(), ip);
        if (decision.permitsTraffic()) {
            return false;
        }
        promise.tryFailure(new UpstreamFailure(403, decision.reason(), hop + "address " + ip
                + " is denied by network.deny (" + decision.reason() + ")", ip.toString()));
        return true;
    }

    /**
     * True when a connection to {@code dest} that dialed {@code dialed} may carry an exchange under {@code engine}
     * (a policy reload can take an address away). Through the parent only an IP literal destination has an
     * address to check; the parent's own is exempt.
     */
    private boolean stillAllowed(Destination dest, PolicyEngine engine, IpAddress dialed) {
        if (parent != null && parent.carries(dest)) {
            return IpAddress.parseStrict(dest.host())
                    .map(ip -> engine.onDial(dest.host(), dest.port(), ip).permitsTraffic()).orElse(true);
        }
        return engine.onDial(dest.host(), dest.port(), dialed).permitsTraffic();
    }

    /**
     * Completes {@code promise} with a stream of a pooled HTTP/2 connection, or of the one being dialed for the
     * destination (which then serves every exchange that waited for it, as far as the server allows streams).
     */
    private boolean streamOnPooled(Destination dest, PolicyEngine engine, EventLoop loop, Hop hop,
                                   Promise<UpstreamLease> promise) {
        Http2Upstreams.Key key = Http2Upstreams.key(loop, dest);
        Http2Upstreams.Parent pooled = h2.pooled(key, address -> stillAllowed(dest, engine, address));
        if (pooled != null) {
            openStream(pooled, dest, hop, true, promise);
            return true;
        }
        Future<Http2Upstreams.Parent> pending = h2.dialing(key);
        if (pending == null) {
            return false;
        }
        pending.addListener(f -> {
            Http2Upstreams.Parent dialed = f.isSuccess() ? (Http2Upstreams.Parent) f.getNow() : null;
            if (dialed != null && dialed.open() && dialed.hasRoom() && stillAllowed(dest, engine, dialed.address())) {
                openStream(dialed, dest, hop, true, promise);
            } else if (f.cause() instanceof UpstreamFailure failure) {
                promise.tryFailure(failure);
            } else {
                lookupAndDial(dest, engine, loop, hop, promise);  // the server chose HTTP/1.1, or has no room
            }
        });
        return true;
    }

    private void openStream(Http2Upstreams.Parent parent, Destination dest, Hop hop, boolean reused,
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
            if (stillAllowed(dest, engine, address)) {
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

    private void dial(Destination dest, PolicyEngine engine, List<InetAddress> addresses, EventLoop loop, Hop hop,
                      Promise<UpstreamLease> promise) {
        for (InetAddress address : addresses) {
            if (denied(dest, engine, IpAddress.of(address), hop, promise)) {
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
        open(dest, chosen, dest.port(), false, loop, hop, promise,
                again -> dial(again, engine, addresses, loop, hop, promise));
    }

    /**
     * Connects to {@code chosen:port}, the destination's checked address or, {@code viaParent}, the parent proxy's
     * (whose {@code CONNECT} then opens the tunnel to the destination), then TLS and ALPN as the destination asks.
     * {@code again} dials the destination anew over HTTP/2, for a server that refused http/1.1.
     */
    private void open(Destination dest, IpAddress chosen, int port, boolean viaParent, EventLoop loop, Hop hop,
                      Promise<UpstreamLease> promise, Consumer<Destination> again) {
        String ipText = chosen.toString();
        Timeouts timeouts = context.policy().proxy().timeouts();
        long started = System.nanoTime();
        UpstreamInitializer.ParentLeg leg = viaParent ? new UpstreamInitializer.ParentLeg(parent.address()
                + " (" + ipText + ")", ipText, parent.authorization(), loop.newPromise()) : null;
        ChannelFuture connect = new Bootstrap()
                .group(loop)
                .channel(Transports.socketChannel())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
                        timeouts.connect().toMillis()))
                .handler(new UpstreamInitializer(dest, dest.h2() ? tls.alpn() : tls.http1(), timeouts, leg))
                .connect(new InetSocketAddress(chosen.toInetAddress(), port));
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
                String reason = viaParent
                        ? (timeout ? ParentConnectHandler.TIMEOUT : ParentConnectHandler.CONNECT_FAILED)
                        : (timeout ? "upstream_connect_timeout" : "upstream_connect_failed");
                promise.tryFailure(new UpstreamFailure(timeout ? 504 : 502, reason, hop
                        + (viaParent ? "parent proxy " + parent.address() + " connect to " : "upstream connect to ")
                        + ipText + " failed: " + rootMessage(f.cause()), ipText));
                return;
            }
            Channel ch = f.channel();
            promise.addListener(p -> {
                if (!p.isSuccess()) {
                    ch.close();
                }
            });
            if (leg == null) {
                tunnelled(dest, ch, chosen, started, hop, parentReady, promise, again);
                return;
            }
            leg.tunnel().addListener(t -> {
                if (t.isSuccess()) {
                    tunnelled(dest, ch, chosen, started, hop, parentReady, promise, again);
                } else {
                    UpstreamFailure failure = (UpstreamFailure) t.cause();
                    promise.tryFailure(new UpstreamFailure(failure.status(), failure.reason(),
                            hop + failure.getMessage(), failure.ip()));
                }
            });
        });
    }

    /** The TCP connection reaches the destination (directly, or through the parent's tunnel): TLS, ALPN, lease. */
    private void tunnelled(Destination dest, Channel ch, IpAddress chosen, long started, Hop hop,
                           Promise<Http2Upstreams.Parent> parentReady, Promise<UpstreamLease> promise,
                           Consumer<Destination> again) {
        SslHandler ssl = ch.pipeline().get(SslHandler.class);
        if (ssl == null) {
            connected(dest, ch, chosen, started, promise);
            return;
        }
        ch.read();
        EventLoop loop = ch.eventLoop();
        Timeouts timeouts = context.policy().proxy().timeouts();
        ssl.handshakeFuture().addListener(h -> {
            if (h.isSuccess() && dest.h2()) {
                boolean speaksH2 = ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol());
                h2.remember(dest, speaksH2);
                if (speaksH2) {
                    Http2Upstreams.Parent pooled = h2.becomeHttp2(Http2Upstreams.key(loop, dest), ch, chosen,
                            timeouts);
                    emitConnected(dest, started);
                    if (parentReady != null) {
                        parentReady.trySuccess(pooled);
                    }
                    openStream(pooled, dest, hop, false, promise);
                    return;
                }
            }
            if (h.isSuccess()) {
                connected(dest, ch, chosen, started, promise);
            } else if (dest.mayFallBackToH2() && refusedHttp1(h.cause())) {
                h2.rememberOnlyH2(dest);    // nothing was sent: the exchange goes again, over HTTP/2
                again.accept(dest.withH2());
            } else {
                boolean timeout = h.cause() instanceof SslHandshakeTimeoutException;
                promise.tryFailure(new UpstreamFailure(timeout ? 504 : 502,
                        timeout ? "upstream_tls_timeout" : "upstream_tls_failed",
                        hop + "upstream TLS handshake failed: " + rootMessage(h.cause()), chosen.toString()));
            }
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

    /** The hop as errors name it ({@code client 10.0.0.5:51234 => host:443: }), made text only when one is. */
    private record Hop(String client, Destination dest) {
        @Override
        public String toString() {
            return "client " + client + " => " + dest.text() + ": ";
        }
    }
}
