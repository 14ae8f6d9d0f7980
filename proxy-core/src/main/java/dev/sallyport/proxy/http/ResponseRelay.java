package dev.sallyport.proxy.http;

import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.SecretReasons;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * Carries one exchange's response from the upstream to the client: the next upstream read only after the
 * client write succeeded. On a {@code 101} to a WebSocket request the {@code 101} goes to the client and
 * {@link WebSocketRelay} takes both connections over.
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
        String accepted = response.headers().get(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
        if (exchange.secrets != null && accepted != null) {
            // the proxy offered none (SecretsStep), so it can read every frame: a compressed one could not be scrubbed
            frontend.upstreamFailed(exchange, 502, SecretsStep.EXTENSION_REFUSED, "upstream "
                    + exchange.destination.text() + " accepted WebSocket extensions that were not offered: '"
                    + accepted + "' (expected: none)");
            return;
        }
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
                    client.eventLoop().execute(() -> WebSocketRelay.start(frontend, exchange, client, upstream));
                });
    }
}
