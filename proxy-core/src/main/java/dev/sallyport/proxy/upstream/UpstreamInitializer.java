package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.Timeouts;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Promise;
import java.util.concurrent.TimeUnit;

/**
 * Builds an upstream pipeline: idle timeout, TLS (SNI and hostname verification for the name), {@link UpstreamCodec};
 * through a parent proxy, its {@code CONNECT} first, the TLS and codec once the parent's tunnel is up.
 */
public final class UpstreamInitializer extends ChannelInitializer<Channel> {

    /** The name of the {@link UpstreamCodec} in an HTTP lease's pipeline. */
    public static final String CODEC = "sallyport-upstream-codec";
    private static final String TLS = "sallyport-upstream-tls";
    private static final String PARENT = "sallyport-parent-connect";

    /**
     * Set while a request waits for its response head: the response-headers timeout applies then, not the idle
     * timeout (slow APIs may think for minutes before the first byte).
     */
    public static final AttributeKey<Boolean> AWAITING_HEAD = AttributeKey.valueOf("sallyport.awaitingHead");

    /** The error code of the RST_STREAM an HTTP/2 upstream ended a stream with, on that stream's channel. */
    public static final AttributeKey<Long> STREAM_RESET = AttributeKey.valueOf("sallyport.streamReset");

    private final Destination dest;
    private final SslContext tls;     // offers h2 in ALPN for destinations that may speak it
    private final Timeouts timeouts;
    private final ParentLeg parent;   // nullable: the connection goes to the parent proxy, then CONNECT

    /**
     * The connection goes to a parent proxy first: {@code CONNECT} with {@code authorization} (nullable), then the
     * destination's layers; {@code tunnel} completes when the parent's tunnel is up, or fails with an
     * {@link UpstreamFailure}. {@code name} and {@code ip} name the parent in errors.
     */
    record ParentLeg(String name, String ip, String authorization, Promise<Void> tunnel) {
    }

    UpstreamInitializer(Destination dest, SslContext tls, Timeouts timeouts, ParentLeg parent) {
        this.dest = dest;
        this.tls = tls;
        this.timeouts = timeouts;
        this.parent = parent;
    }

    @Override
    protected void initChannel(Channel ch) {
        ChannelPipeline p = ch.pipeline();
        p.addLast(new IdleStateHandler(0, 0, timeouts.idle().toMillis(), TimeUnit.MILLISECONDS));
        p.addLast(new IdleCloser());
        if (parent == null) {
            addLayers(ch, p.lastContext().name());
        } else {
            p.addLast(PARENT, new ParentConnectHandler(dest.text(), parent.authorization(), parent.name(),
                    parent.ip(), timeouts.connect().toMillis(), ctx -> addLayers(ctx.channel(), PARENT),
                    parent.tunnel()));
        }
        p.addLast(new ExceptionSink());
    }

    /** TLS (SNI and hostname verification for the destination's name) and the HTTP codec, after {@code after}. */
    private void addLayers(Channel ch, String after) {
        String last = after;
        if (dest.tls()) {
            SslHandler ssl = tls.newHandler(ch.alloc(), dest.host(), dest.port());
            ssl.setHandshakeTimeoutMillis(timeouts.tls().toMillis());
            ch.pipeline().addAfter(last, TLS, ssl);
            last = TLS;
        }
        if (dest.http()) {
            HttpDecoderConfig config = new HttpDecoderConfig()
                    .setMaxInitialLineLength(16 * 1024)
                    .setMaxHeaderSize(64 * 1024)
                    .setMaxChunkSize(64 * 1024)
                    .setAllowDuplicateContentLengths(false)
                    .setStrictLineParsing(true);
            ch.pipeline().addAfter(last, CODEC, new UpstreamCodec(config));
        }
    }

    /** Ends exceptions nobody after it handled (TLS failures are reported through the handshake future). */
    static final class ExceptionSink extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Closes an upstream connection (or HTTP/2 stream) that saw no traffic for {@code timeouts.idle}; an HTTP/2
     * connection only once it has no stream open (each stream has its own).
     */
    static final class IdleCloser extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                if (!Boolean.TRUE.equals(ctx.channel().attr(AWAITING_HEAD).get())
                        && !Http2Upstreams.busy(ctx.channel())) {
                    ctx.close();
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }
    }
}
