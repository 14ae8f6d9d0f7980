package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.IpAddress;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Idle keep-alive connections per destination (host, port, TLS) and per event loop, so a reused channel always
 * runs on the loop of the client it serves; each remembers the address it dialed, which the connector checks
 * against the policy in force before reusing it. A pooled channel reads: anything the server sends while idle
 * (or its close) takes it out of the pool, and a channel is handed out only while nothing waits unread on its
 * socket ({@link PendingInput}) and its codec is in step ({@link UpstreamCodec#inStep}).
 *
 * <p>Bounded twice: {@link #MAX_IDLE_PER_KEY} per destination and loop, and {@code maxIdle} in all; beyond that
 * the connection parked longest ago is closed. Without the second bound a workload that reaches many distinct
 * hosts made the proxy keep one idle TLS connection (a descriptor and BoringSSL's state) per host for the whole
 * idle timeout (five minutes by default), outside {@code limits.max_connections}.
 */
final class UpstreamPool {

    /**
     * Idle connections kept per destination and loop: as many as the exchanges one busy destination has at once on a
     * loop (an HTTP/2 client alone may run 100 streams), so that a burst's connections are there for the next one
     * instead of being closed and dialed again with a full TLS handshake (at 16, HTTP/2 through the proxy cost four
     * times the CPU per request of HTTP/1.1 keep-alive).
     */
    static final int MAX_IDLE_PER_KEY = 128;
    /** Default bound on idle connections in all. */
    static final int MAX_IDLE = 1_024;
    private static final String GUARD = "sallyport-pool-idle";

    record Key(EventLoop loop, String host, int port, boolean tls) {}

    /** A parked channel and the address it dialed; {@code parked} is cleared once, when it leaves the pool. */
    record Idle(Channel channel, IpAddress address, AtomicBoolean parked) {

        Idle(Channel channel, IpAddress address) {
            this(channel, address, new AtomicBoolean(true));
        }
    }

    private final Map<Key, ArrayDeque<Idle>> idle = new ConcurrentHashMap<>();
    /** Every parked connection, oldest first; guarded by itself (event loops park and take concurrently). */
    private final LinkedHashSet<Idle> byAge = new LinkedHashSet<>();
    private final int maxIdle;

    UpstreamPool() {
        this(MAX_IDLE);
    }

    UpstreamPool(int maxIdle) {
        this.maxIdle = maxIdle;
    }

    /** An idle, open channel for {@code key}, or null. Call on {@code key.loop()}. */
    Idle poll(Key key) {
        ArrayDeque<Idle> queue = idle.get(key);
        while (queue != null && !queue.isEmpty()) {
            Idle parked = queue.pollLast();
            if (!leave(parked)) {
                continue;   // closed as the oldest by another loop: its close takes it out
            }
            Channel ch = parked.channel();
            if (ch.isActive() && UpstreamCodec.inStep(ch) && PendingInput.quiet(ch)) {
                ch.config().setAutoRead(false);
                ch.pipeline().remove(GUARD);
                return parked;
            }
            ch.close();     // closed, out of step, or the server sent something since: never another exchange's
        }
        return null;
    }

    /** Parks {@code ch}; closes it when the pool for {@code key} is full. Call on {@code key.loop()}. */
    void offer(Key key, Channel ch, IpAddress address) {
        ArrayDeque<Idle> queue = idle.computeIfAbsent(key, k -> new ArrayDeque<>());
        if (queue.size() >= MAX_IDLE_PER_KEY || !ch.isActive()) {
            ch.close();
            return;
        }
        Idle parked = new Idle(ch, address);
        ch.pipeline().addLast(GUARD, new IdleGuard(key, parked));
        queue.addLast(parked);
        ch.config().setAutoRead(true);
        Idle oldest = null;
        synchronized (byAge) {
            byAge.add(parked);
            if (byAge.size() > maxIdle) {
                oldest = byAge.getFirst();
            }
        }
        if (oldest != null && leave(oldest)) {
            oldest.channel().close();   // on its own loop; its guard takes it out of its queue
        }
    }

    /** The number of parked connections. */
    int size() {
        synchronized (byAge) {
            return byAge.size();
        }
    }

    void closeAll() {
        idle.values().forEach(q -> q.forEach(parked -> parked.channel().close()));
    }

    /** Marks {@code parked} as gone from the pool; false when it already was (closed as the oldest). */
    private boolean leave(Idle parked) {
        if (!parked.parked().compareAndSet(true, false)) {
            return false;
        }
        synchronized (byAge) {
            byAge.remove(parked);
        }
        return true;
    }

    private final class IdleGuard extends ChannelInboundHandlerAdapter {
        private final Key key;
        private final Idle parked;

        IdleGuard(Key key, Idle parked) {
            this.key = key;
            this.parked = parked;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            leave(parked);
            ArrayDeque<Idle> queue = idle.get(key);
            if (queue != null) {
                queue.removeIf(p -> p == parked);
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
