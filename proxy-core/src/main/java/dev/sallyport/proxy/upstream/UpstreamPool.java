package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.IpAddress;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idle keep-alive connections per destination (host, port, TLS) and per event loop, so a reused channel always
 * runs on the loop of the client it serves; each remembers the address it dialed, which the connector checks
 * against the policy in force before reusing it. A pooled channel reads: anything the server sends while idle
 * (or its close) takes it out of the pool.
 */
final class UpstreamPool {

    private static final int MAX_IDLE_PER_KEY = 16;
    private static final String GUARD = "sallyport-pool-idle";

    record Key(EventLoop loop, String host, int port, boolean tls) {}

    /** A parked channel and the address it dialed. */
    record Idle(Channel channel, IpAddress address) {}

    private final Map<Key, ArrayDeque<Idle>> idle = new ConcurrentHashMap<>();

    /** An idle, open channel for {@code key}, or null. Call on {@code key.loop()}. */
    Idle poll(Key key) {
        ArrayDeque<Idle> queue = idle.get(key);
        while (queue != null && !queue.isEmpty()) {
            Idle parked = queue.pollLast();
            Channel ch = parked.channel();
            if (ch.isActive()) {
                ch.config().setAutoRead(false);
                ch.pipeline().remove(GUARD);
                return parked;
            }
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
        ch.pipeline().addLast(GUARD, new IdleGuard(key));
        queue.addLast(new Idle(ch, address));
        ch.config().setAutoRead(true);
    }

    void closeAll() {
        idle.values().forEach(q -> q.forEach(parked -> parked.channel().close()));
    }

    private final class IdleGuard extends ChannelInboundHandlerAdapter {
        private final Key key;

        IdleGuard(Key key) {
            this.key = key;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            ArrayDeque<Idle> queue = idle.get(key);
            if (queue != null) {
                queue.removeIf(parked -> parked.channel() == ctx.channel());
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
