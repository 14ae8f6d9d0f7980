package dev.sallyport.proxy.http;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.SecretReasons;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.RelayHandler;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Carries one exchange's response from the upstream to the client: the next upstream read only after the
 * client write succeeded. On a {@code 101} to a WebSocket request both pipelines drop their HTTP codecs and
 * become a byte relay, audited as {@code websocket_end} when it closes.
 */
final class ResponseRelay {

    /** How much of a decoded body is written before the client's writability is looked at again. */
    static final long PUMP_BUDGET = 64 * 1024;

    private final FrontendHandler frontend;
    private final ChannelFutureListener closeClientOnFailure;

    ResponseRelay(FrontendHandler frontend) {
        this.frontend = frontend;
        this.closeClientOnFailure = f -> {
            if (!f.isSuccess()) {
                frontend.ctx.close();
            }
        };
    }

    void head(Exchange exchange, HttpResponse response) {
        exchange.cancelHeaderTimer();
        exchange.lease.channel().attr(UpstreamInitializer.AWAITING_HEAD).set(false);
        if (exchange.secrets != null) {
            try {
                exchange.secrets.scrubHead(response);
            } catch (ResponseDecodeException e) {
                ReferenceCountUtil.release(response);
                frontend.upstreamFailed(exchange, 502, SecretReasons.RESPONSE_DECODE_FAILED,
                        "upstream " + exchange.destination.text() + ": " + e.getMessage());
                return;
            }
        }
        String listed = HopHeaders.protectedListed(response.headers());
        if (listed != null) {
            ReferenceCountUtil.release(response);
            frontend.upstreamFailed(exchange, 502, "upstream_bad_response", "upstream " + exchange.destination.text()
                    + ": its Connection header lists " + listed + " (expected: only hop-by-hop headers)");
            return;
        }
        int code = response.status().code();
        if (code == 101 && !exchange.websocket) {
            ReferenceCountUtil.release(response);
            frontend.upstreamFailed(exchange, 502, "upstream_bad_response", "upstream " + exchange.destination.text()
                    + ": 101 Switching Protocols to a request that asked for no upgrade");
            return;
        }
        if (code == 101) {
            upgrade(exchange, response);
            return;
        }
        if (code >= 100 && code < 200) {
            exchange.informational = true;
            DefaultFullHttpResponse interim = new DefaultFullHttpResponse(response.protocolVersion(), response.status());
            HopHeaders.strip(interim.headers(), false);
            writeAndRead(exchange, interim);
            return;
        }
        exchange.status = code;
        exchange.responseStarted = true;
        boolean framed = HttpUtil.isContentLengthSet(response) || HttpUtil.isTransferEncodingChunked(response)
                || code == 204 || code == 304 || exchange.upstreamHead.method().name().equals("HEAD");
        exchange.upstreamReusable = HttpUtil.isKeepAlive(response) && framed;
        exchange.closeClientAfter = !exchange.clientKeepAlive || !framed;
        HopHeaders.strip(response.headers(), false);
        if (exchange.closeClientAfter) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        // Not flushed here: a body that came in the same read goes out with the head (one TLS record, one
        // send); BackendHandler flushes at the end of the upstream read, so a head without a body waits no longer.
        Channel upstream = exchange.lease.channel();
        exchange.clientFlushPending = true;
        frontend.ctx.write(response).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                upstream.read();
            } else {
                frontend.ctx.close();
            }
        });
    }

    /** Flushes what {@link #head} wrote, at the end of the upstream read that carried it. */
    void readComplete(Exchange exchange) {
        if (exchange.clientFlushPending) {
            exchange.clientFlushPending = false;
            frontend.ctx.flush();
        }
    }

    void content(Exchange exchange, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        if (exchange.upgraded) {
            content.release();      // the empty body of the 101; raw bytes follow
            return;
        }
        if (exchange.informational) {
            content.release();
            exchange.informational = !last;
            if (last) {
                exchange.lease.channel().read();
            }
            return;
        }
        exchange.bytesDown += content.content().readableBytes();
        if (exchange.secrets == null) {
            forward(exchange, content);
            return;
        }
        try {
            exchange.secrets.accept(content);
        } catch (ResponseDecodeException e) {
            frontend.upstreamFailed(exchange, 502, SecretReasons.RESPONSE_DECODE_FAILED,
                    "upstream " + exchange.destination.text() + ": " + e.getMessage());
            return;
        }
        pumpScrubbed(exchange);
    }

    /**
     * Writes the scrubbed body while the client keeps up: a decoded body is drawn out {@link #PUMP_BUDGET} bytes at a
     * time and only while the client's outbound buffer is below its high-water mark, so a client that does not read
     * holds at most that much of a compressed body the proxy decoded (not the whole of it). The next upstream read
     * follows once everything taken is out.
     */
    private void pumpScrubbed(Exchange exchange) {
        while (true) {
            List<Object> parts = new ArrayList<>(2);
            boolean drained;
            try {
                drained = exchange.secrets.drain(PUMP_BUDGET, parts);
            } catch (ResponseDecodeException e) {     // mid-body: the client connection closes without the last chunk
                frontend.upstreamFailed(exchange, 502, SecretReasons.RESPONSE_DECODE_FAILED,
                        "upstream " + exchange.destination.text() + ": " + e.getMessage());
                return;
            }
            if (drained && !parts.isEmpty() && parts.getLast() instanceof LastHttpContent last) {
                for (int i = 0; i < parts.size() - 1; i++) {
                    frontend.ctx.write(parts.get(i));
                }
                forward(exchange, last);
                return;
            }
            for (Object part : parts) {
                frontend.ctx.write(part).addListener(closeClientOnFailure);
            }
            frontend.ctx.flush();
            if (drained) {
                readOnWhenClientWritable(exchange);
                return;
            }
            if (!frontend.ctx.channel().isWritable()) {
                exchange.pumpWhenClientWritable = true;
                return;
            }
        }
    }

    private void forward(Exchange exchange, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        if (!last) {
            writeAndRead(exchange, content);
            return;
        }
        exchange.responseDone = true;
        Trailers.strip(((LastHttpContent) content).trailingHeaders());
        Channel upstream = exchange.lease.channel();
        frontend.ctx.writeAndFlush(content).addListener((ChannelFutureListener) f -> {
            boolean reusable = f.isSuccess() && exchange.upstreamReusable && exchange.requestDone;
            if (upstream.pipeline().get(BackendHandler.NAME) != null) {
                upstream.pipeline().remove(BackendHandler.NAME);
            }
            frontend.connector().release(exchange.lease, reusable);
            frontend.finish(exchange, exchange.status);
            if (f.isSuccess()) {
                frontend.nextRequest(!exchange.closeClientAfter);
            } else {
                frontend.ctx.close();
            }
        });
    }

    void upgradedBytes(Exchange exchange, ByteBuf raw) {
        exchange.upgradeBytes.add(raw);
    }

    /**
     * Sends a part of the response on and reads the next from upstream at once while the client's outbound buffer
     * is below its high-water mark; above it, {@link #clientWritable} reads on once the client has drained it.
     */
    private void writeAndRead(Exchange exchange, Object message) {
        frontend.ctx.writeAndFlush(message).addListener(closeClientOnFailure);
        readOnWhenClientWritable(exchange);
    }

    private void readOnWhenClientWritable(Exchange exchange) {
        if (frontend.ctx.channel().isWritable()) {
            exchange.lease.channel().read();
        } else {
            exchange.readWhenClientWritable = true;
        }
    }

    /** The client drained its outbound buffer: go on with a scrubbed body, or read on from upstream. */
    void clientWritable(Exchange exchange) {
        if (exchange.lease == null || exchange.finished) {
            return;
        }
        if (exchange.pumpWhenClientWritable) {
            exchange.pumpWhenClientWritable = false;
            pumpScrubbed(exchange);
        } else if (exchange.readWhenClientWritable) {
            exchange.readWhenClientWritable = false;
            exchange.lease.channel().read();
        }
    }

    private void upgrade(Exchange exchange, HttpResponse response) {
        exchange.status = 101;
        exchange.responseStarted = true;
        exchange.upgraded = true;
        HopHeaders.strip(response.headers(), true);
        Channel client = frontend.ctx.channel();
        Channel upstream = exchange.lease.channel();
        frontend.ctx.writeAndFlush(new DefaultFullHttpResponse(response.protocolVersion(), response.status(),
                client.alloc().buffer(0), response.headers(), io.netty.handler.codec.http.EmptyHttpHeaders.INSTANCE))
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        exchange.upgraded = false;
                        frontend.finish(exchange, 101);
                        upstream.close();
                        client.close();
                        return;
                    }
                    client.eventLoop().execute(() -> switchToRelay(exchange, client, upstream));
                });
    }

    /**
     * Turns both pipelines into the relay. The client side goes first: once it is a WebSocket nothing may pass its
     * HTTP encoder (which refuses raw bytes, silently losing the frames). Then the upstream side: the bytes that
     * came after the {@code 101} head (decoded by the HTTP codec and kept in {@link Exchange#upgradeBytes}, then
     * whatever is still in the codec's buffer when it is removed) pass the scrubber and the relay first, in order.
     * Both relays ask for the next read when they are added.
     */
    private void switchToRelay(Exchange exchange, Channel client, Channel upstream) {
        AuditRecord audit = exchange.audit;
        audit.status(101);
        frontend.context.emit(new ProxyEvent.ExchangeCompleted(frontend.context.clock().instant(), audit.fields()));
        AtomicLong up = new AtomicLong(exchange.bytesUp);
        AtomicLong down = new AtomicLong(exchange.bytesDown);
        ChannelPipeline cp = client.pipeline();
        cp.addLast(new RelayHandler(upstream, up::addAndGet));
        cp.remove(frontend);
        cp.remove(HttpServerCodec.class);
        cp.remove(HttpFramingGuard.class);
        frontend.context.exchangeFinished();
        exchange.finished = true;
        frontend.current = null;
        ChannelPipeline up2 = upstream.pipeline();
        up2.remove(BackendHandler.NAME);
        if (exchange.secrets != null) {
            up2.addLast(exchange.secrets.upgradedFilter());
        }
        up2.addLast(new RelayHandler(client, down::addAndGet));
        ChannelHandlerContext codec = up2.context(UpstreamInitializer.CODEC);
        while (!exchange.upgradeBytes.isEmpty()) {
            codec.fireChannelRead(exchange.upgradeBytes.poll());
        }
        up2.remove(UpstreamInitializer.CODEC);
        client.closeFuture().addListener(c -> {
            upstream.close();
            audit.bytes(up.get(), down.get()).duration(exchange.elapsedMs()).reason("websocket_end");
            frontend.context.emit(new ProxyEvent.TunnelEnded(frontend.context.clock().instant(), "websocket_end",
                    audit.fields()));
        });
    }
}
