package dev.sallyport.proxy.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listener's answer to an accept that fails, most often for want of a file descriptor (EMFILE when the proxy
 * holds its RLIMIT_NOFILE, ENFILE when the machine does): stop reading the listener for a while instead of
 * asking again at once (the connection waits in the backlog, so every retry fails the same way and an event loop
 * that retries at once spins at full CPU), then try again, waiting longer each time up to {@link #MAX_PAUSE_MILLIS}.
 * One line when accepting stops and one when it works again, however many tries fail between: the connections
 * that were accepted stay served and audited meanwhile, as far as their own descriptors reach. One instance per
 * listener (it holds that listener's state; the listener's event loop is its only thread).
 */
public final class AcceptPause extends ChannelInboundHandlerAdapter {
    private static final Logger LOGGER = LoggerFactory.getLogger(AcceptPause.class);
    static final long FIRST_PAUSE_MILLIS = 50;
    static final long MAX_PAUSE_MILLIS = 1_000;

    private long pauseMillis;
    private long failures;
    private long pausedAtNanos;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (failures > 0 && msg instanceof Channel) {
            LOGGER.warn("listener accepting again address={} failed_accepts={} paused_ms={}",
                    ctx.channel().localAddress(), failures,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAtNanos));
            failures = 0;
            pauseMillis = 0;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Channel listener = ctx.channel();
        if (failures++ == 0) {
            pausedAtNanos = System.nanoTime();
            LOGGER.warn("listener cannot accept, pausing it address={} error={}", listener.localAddress(),
                    cause.toString());
            LOGGER.debug("accept failure", cause);
        }
        pauseMillis = pauseMillis == 0 ? FIRST_PAUSE_MILLIS : Math.min(MAX_PAUSE_MILLIS, pauseMillis * 2);
        if (listener.config().isAutoRead()) {
            listener.config().setAutoRead(false);
            listener.eventLoop().schedule(() -> {
                if (listener.isOpen()) {
                    listener.config().setAutoRead(true);
                }
            }, pauseMillis, TimeUnit.MILLISECONDS);
        }
        // not passed on: Netty's acceptor would pause the listener a second time, and the pipeline's tail would
        // log each failure with its stack trace
    }
}
