package dev.sallyport.proxy.upstream;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idle keep-alive connections per destination (host, port, dialed address, TLS) and per event loop, so a
 * reused channel always runs on the loop of the client it serves. A pooled channel reads: anything the server
 * sends while idle (or its close) takes it out of the pool.
 */
final class UpstreamPool {

    private static final int MAX_IDLE_PER_KEY = 16;
    private static final String GUARD = "sallyport-pool-idle";

    record Key(EventLoop loop, String host, int port, String ip, boolean tls) {}

    private final Map<Key, ArrayDeque<Channel>> idle = new ConcurrentHashMap<>();

    /** An idle, open channel for {@code key}, or null. Call on {@code key.loop()}. */
    Channel poll(Key key) {
        ArrayDeque<Channel> queue = idle.get(key);
        while (queue != null && !queue.isEmpty()) {
            Channel ch = queue.pollLast();
            if (ch.isActive()) {
                ch.config().setAutoRead(false);
                ch.pipeline().remove(GUARD);
                return ch;
            }
        }
        return null;
    }

    /** Parks {@code ch}; closes it when the pool for {@code key} is full. Call on {@code key.loop()}. */
    void offer(Key key, Channel ch) {
        ArrayDeque<Channel> queue = idle.computeIfAbsent(key, k -> new ArrayDeque<>());
        if (queue.size() >= MAX_IDLE_PER_KEY || !ch.isActive()) {
            ch.close();
            return;
        }
        ch.pipeline().addLast(GUARD, new IdleGuard(key));
        queue.addLast(ch);
        ch.config().setAutoRead(true);
    }

    void closeAll() {
        idle.values().forEach(q -> q.forEach(Channel::close));
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
            ArrayDeque<Channel> queue = idle.get(key);
            if (queue != null) {
                queue.remove(ctx.channel());
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
