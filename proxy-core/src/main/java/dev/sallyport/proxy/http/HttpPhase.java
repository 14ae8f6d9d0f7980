package dev.sallyport.proxy.http;

import dev.sallyport.policy.Limits;
import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.upstream.UpstreamConnector;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;

/**
 * Installs the HTTP phase at the end of a client pipeline: framing guard, Netty's codec configured strictly
 * (the guard already refused what it would accept leniently), and the {@link FrontendHandler}.
 */
public final class HttpPhase {

    public static final String GUARD = "sallyport-http-guard";
    public static final String CODEC = "sallyport-http-codec";
    public static final String FRONTEND = "sallyport-frontend";

    /** A request head must arrive within this long after its first byte (slowloris): idle, at most 30 s. */
    public static final java.time.Duration MAX_HEAD_DEADLINE = java.time.Duration.ofSeconds(30);

    private HttpPhase() {}

    static java.time.Duration headDeadline(java.time.Duration idle) {
        return idle.compareTo(MAX_HEAD_DEADLINE) < 0 ? idle : MAX_HEAD_DEADLINE;
    }

    public static void install(ChannelPipeline pipeline, ProxyContext context, UpstreamConnector connector,
                               TunnelTarget tunnel) {
        Policy policy = context.policy();
        Limits limits = policy.proxy().limits();
        HttpDecoderConfig config = new HttpDecoderConfig()
                .setMaxInitialLineLength(limits.maxInitialLineBytes() + 64)
                .setMaxHeaderSize(limits.maxHeaderBytes() + 64)
                .setMaxChunkSize(64 * 1024)
                .setAllowDuplicateContentLengths(false)
                .setAllowPartialChunks(true)
                .setStrictLineParsing(true)
                .setValidateHeaders(true);
        pipeline.addLast(GUARD, new HttpFramingGuard(limits, headDeadline(policy.proxy().timeouts().idle())));
        pipeline.addLast(CODEC, new HttpServerCodec(config));
        pipeline.addLast(FRONTEND, new FrontendHandler(context, connector, tunnel));
    }
}
