package dev.sallyport.proxy.http2;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.ExchangeCore;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameLogger;
import io.netty.handler.logging.LogLevel;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Records what Netty's HTTP/2 codec refuses by itself, seen as the frames it sends: a stream reset before any
 * front end saw its request (a header block its validation refused, a stream beyond the concurrency limit) gets a
 * request record with the reason {@code h2_<error>}; a GOAWAY with an error (rapid reset, a CONTINUATION flood, a
 * control-frame flood) becomes the tunnel's reason. One per connection, on its event loop. Frames are not logged.
 */
final class Http2Refusals extends Http2FrameLogger {

    private final ExchangeCore core;
    private final TunnelTarget tunnel;
    /** Streams whose request a front end took (their exchange records itself), kept while the connection lives. */
    private final Set<Integer> taken = new HashSet<>();
    private final Set<Integer> recorded = new HashSet<>();
    private final Http2FrameGuard guard;

    Http2Refusals(ExchangeCore core, TunnelTarget tunnel, Http2FrameGuard guard) {
        super(LogLevel.TRACE, Http2Refusals.class);
        this.core = core;
        this.tunnel = tunnel;
        this.guard = guard;
    }

    /** DATA frames the proxy writes are what earns a client its WINDOW_UPDATE frames. */
    @Override
    public void logData(Direction direction, ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding,
                        boolean endStream) {
        if (direction == Direction.OUTBOUND) {
            guard.dataSent();
        }
    }

    /** A front end read the request of {@code stream}: its exchange (or refusal) is recorded there. */
    void taken(int stream) {
        taken.add(stream);
    }

    @Override
    public void logRstStream(Direction direction, ChannelHandlerContext ctx, int stream, long errorCode) {
        if (direction == Direction.OUTBOUND && errorCode != Http2Error.NO_ERROR.code()
                && errorCode != Http2Error.CANCEL.code() && !taken.contains(stream) && recorded.add(stream)) {
            Http2Error error = Http2Error.valueOf(errorCode);
            int status = error == Http2Error.REFUSED_STREAM ? 429 : 400;
            ExchangeRequest.Origin origin = new ExchangeRequest.Origin(AuditRecord.clientText(
                    ctx.channel().remoteAddress()), "intercepted", tunnel.sni(), "h2", tunnel.arrival(),
                    ClientIdentity.of(ctx.channel()));
            core.recordRefused(origin, new Authority(tunnel.host(), tunnel.port()), status, reason(error));
        }
    }

    @Override
    public void logGoAway(Direction direction, ChannelHandlerContext ctx, int lastStream, long errorCode,
                          ByteBuf debugData) {
        if (direction == Direction.OUTBOUND && errorCode != Http2Error.NO_ERROR.code()) {
            tunnel.audit().reason(guard.failure() != null ? guard.failure() : reason(Http2Error.valueOf(errorCode)));
            if (debugData.isReadable()) {
                Http2Connections.LOGGER.warn("HTTP/2 connection from {} to {}:{} ended: {}",
                        AuditRecord.clientText(ctx.channel().remoteAddress()), tunnel.host(), tunnel.port(),
                        debugData.toString(debugData.readerIndex(), Math.min(200, debugData.readableBytes()),
                                StandardCharsets.US_ASCII).replaceAll("[^\\x20-\\x7e]", "?"));
            }
        }
    }

    static String reason(Http2Error error) {
        return "h2_" + (error == null ? "error" : error.name().toLowerCase(Locale.ROOT));
    }
}
