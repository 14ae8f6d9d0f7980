package dev.sallyport.proxy.upstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.List;

/**
 * The HTTP/1.1 codec of an upstream connection, for one request at a time, that also knows whether the
 * connection is still in step: a connection is {@linkplain #inStep(Channel) in step} only when every request
 * written got exactly one final response that ended where its framing said and nothing else arrived. Bytes after
 * a final response (in the same read, or while no request is outstanding), a {@code 101} the request did not ask
 * for, or a body behind a response that cannot have one take it out of step for good: such a connection must
 * never carry another exchange (another client's request would get the leftover as its answer).
 *
 * <p>Differs from Netty's {@code HttpClientCodec} in that: the response to a {@code HEAD} is bodiless by the
 * request in flight, a {@code 101} switches the decoder to raw bytes only when the request asked to upgrade,
 * and unexpected bytes fail the decoder ({@link OutOfStepException}) instead of being read as the next response.
 */
public final class UpstreamCodec extends CombinedChannelDuplexHandler<UpstreamCodec.Decoder, UpstreamCodec.Encoder> {

    /** No request outstanding; {@code inFlight} is the method of the request whose response is awaited. */
    private HttpMethod inFlight;
    private boolean upgradeAsked;
    private boolean finalHeadSeen;
    private boolean upgraded;
    private String outOfStep;

    public UpstreamCodec(HttpDecoderConfig config) {
        init(new Decoder(config), new Encoder());
    }

    /** True when {@code ch} has an upstream codec and is in step (see the class comment). */
    public static boolean inStep(Channel ch) {
        UpstreamCodec codec = ch.pipeline().get(UpstreamCodec.class);
        return codec != null && codec.outOfStep == null && codec.inFlight == null && !codec.upgraded
                && codec.inboundHandler().buffered() == 0;
    }

    /** Why {@code ch} is out of step, or null. */
    public static String whyOutOfStep(Channel ch) {
        UpstreamCodec codec = ch.pipeline().get(UpstreamCodec.class);
        return codec == null ? "no HTTP codec" : codec.outOfStep;
    }

    private void markOutOfStep(String why) {
        if (outOfStep == null) {
            outOfStep = why;
        }
    }

    /** A response byte the connection had no request for, or a response the request did not allow. */
    public static final class OutOfStepException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OutOfStepException(String message) {
            super(message, null, false, false);
        }
    }

    final class Encoder extends HttpRequestEncoder {
        @Override
        protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) throws Exception {
            if (msg instanceof HttpRequest request) {
                if (inFlight != null) {
                    markOutOfStep("a second request was written before the first one's response");
                }
                inFlight = request.method();
                upgradeAsked = request.headers().contains(HttpHeaderNames.UPGRADE);
                finalHeadSeen = false;
            }
            super.encode(ctx, msg, out);
        }
    }

    final class Decoder extends HttpResponseDecoder {

        Decoder(HttpDecoderConfig config) {
            super(config);
        }

        int buffered() {
            return actualReadableBytes();
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            if (upgraded) {
                super.decode(ctx, buffer, out);     // raw bytes of an upgraded connection
                return;
            }
            if (inFlight == null && buffer.isReadable()) {
                markOutOfStep("the upstream sent " + buffer.readableBytes() + " bytes with no request outstanding");
                buffer.skipBytes(buffer.readableBytes());
                throw new OutOfStepException(outOfStep);
            }
            int before = out.size();
            super.decode(ctx, buffer, out);
            for (int i = before; i < out.size(); i++) {
                Object msg = out.get(i);
                if (msg instanceof HttpResponse response) {
                    int code = response.status().code();
                    finalHeadSeen = code >= 200 || code == 101;
                    if (code == 101 && !upgradeAsked) {
                        markOutOfStep("the upstream answered 101 to a request that asked for no upgrade");
                    }
                    if (code == 204 && (response.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)
                            || response.headers().getInt(HttpHeaderNames.CONTENT_LENGTH, 0) != 0)) {
                        markOutOfStep("the upstream sent a 204 that declares a body");
                    }
                }
                if (msg instanceof LastHttpContent && finalHeadSeen) {
                    inFlight = null;
                    finalHeadSeen = false;
                }
            }
            if (!upgraded && inFlight == null && buffer.isReadable()) {
                markOutOfStep("the upstream sent more bytes after a complete response");
            }
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpMessage msg) {
            if (msg instanceof HttpResponse response && response.status().code() >= 200
                    && HttpMethod.HEAD.equals(inFlight)) {
                return true;
            }
            return super.isContentAlwaysEmpty(msg);
        }

        @Override
        protected boolean isSwitchingToNonHttp1Protocol(HttpResponse msg) {
            boolean switching = upgradeAsked && super.isSwitchingToNonHttp1Protocol(msg);
            if (switching) {
                upgraded = true;
            }
            return switching;
        }
    }
}
