package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.SecretReasons;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The response half of an {@link Exchange}: from the upstream's head to the last part the client got. The head is
 * checked (framing fields in {@code Connection}, a {@code 101} nobody asked for, extensions nobody offered) and
 * scrubbed, interim responses pass, the body is scrubbed (decoded bodies drawn out under a budget) and written
 * under the client's back-pressure: the next upstream read only after the client took the last part, or once it
 * drained its buffer.
 */
final class ResponseFlow {

    /** How much of a decoded body is written before the client's writability is looked at again. */
    static final long PUMP_BUDGET = 64 * 1024;

    /** Where the response is. */
    private enum Stage { AWAITING_HEAD, INTERIM, GATHERING, FILTERING, BODY, LAST_SENT, UPGRADING }

    /** Whether the head written at the start of an upstream read still waits for that read's end to be flushed. */
    private enum HeadFlush { DONE, AT_READ_END }

    /** What waits for the client to drain its buffer. */
    private enum Waiting { NOTHING, UPSTREAM_READ, SCRUBBED_BODY }

    private final Exchange exchange;
    private final ChannelFutureListener abortOnFailure;
    private final ArrayDeque<ByteBuf> earlyBytes = new ArrayDeque<>();
    private Stage stage = Stage.AWAITING_HEAD;
    private Waiting waiting = Waiting.NOTHING;
    private ResponseFraming framing;
    private int status;
    private boolean upstreamComplete;
    private HeadFlush headFlush = HeadFlush.DONE;
    /** A package document's head, held while its body is gathered and filtered. */
    private HttpResponse held;

    ResponseFlow(Exchange exchange) {
        this.exchange = exchange;
        this.abortOnFailure = f -> {
            if (!f.isSuccess()) {
                exchange.down().abort();
            }
        };
    }

    boolean started() {
        return stage == Stage.BODY || stage == Stage.LAST_SENT || stage == Stage.UPGRADING;
    }

    boolean lastSent() {
        return stage == Stage.LAST_SENT || stage == Stage.UPGRADING;
    }

    int status() {
        return status;
    }

    /** Whether the client's connection may carry another request after this response. */
    boolean clientMayStayOpen() {
        return framing != null && framing.delimited();
    }

    void head(HttpResponse response) {
        exchange.cancelHeaderTimer();
        Channel upstream = exchange.lease().channel();
        upstream.attr(UpstreamInitializer.AWAITING_HEAD).set(false);
        if (exchange.secrets() != null) {
            try {
                exchange.secrets().scrubHead(response);
            } catch (ResponseDecodeException e) {
                ReferenceCountUtil.release(response);
                exchange.upstreamFailed(502, SecretReasons.RESPONSE_DECODE_FAILED,
                        "upstream " + exchange.destination().text() + ": " + e.getMessage());
                return;
            }
        }
        Refusal refusal = refusal(response);
        if (refusal != null) {
            ReferenceCountUtil.release(response);
            exchange.upstreamFailed(502, refusal.reason(), "upstream " + exchange.destination().text() + ": "
                    + refusal.message());
            return;
        }
        int code = response.status().code();
        if (code == 101) {
            upgrade(response);
            return;
        }
        if (code < 200) {
            stage = Stage.INTERIM;
            DefaultFullHttpResponse interim = new DefaultFullHttpResponse(response.protocolVersion(), response.status());
            interim.headers().set(response.headers());
            HopHeaders.strip(interim.headers(), false);
            writeAndRead(interim);
            return;
        }
        status = code;
        framing = ResponseFraming.of(response, exchange.upstreamHead().method());
        HopHeaders.strip(response.headers(), false);
        if (exchange.document() != null && code == 200 && exchange.upstreamHead().method() == HttpMethod.GET) {
            gather(response, upstream);
            return;
        }
        stage = Stage.BODY;
        // Not flushed here: a body that came in the same read goes out with the head (one TLS record, one send);
        // the end of the upstream read flushes, so a head without a body waits no longer.
        headFlush = HeadFlush.AT_READ_END;
        exchange.down().send(response, false).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                upstream.read();
            } else {
                exchange.down().abort();
            }
        });
    }

    /** Why a response head cannot be passed on. */
    private record Refusal(String reason, String message) {}

    private Refusal refusal(HttpResponse response) {
        String listed = HopHeaders.protectedListed(response.headers());
        if (listed != null) {
            return new Refusal("upstream_bad_response", "its Connection header lists " + listed
                    + " (expected: only hop-by-hop headers)");
        }
        int code = response.status().code();
        if (code == 101 && exchange.upgrade() != ExchangeRequest.Upgrade.WEBSOCKET) {
            return new Refusal("upstream_bad_response", "101 Switching Protocols to a request that asked for no"
                    + " upgrade");
        }
        String accepted = response.headers().get(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
        if (code == 101 && exchange.secrets() != null && accepted != null) {
            // the proxy offered none (SecretsStage), so it can read every frame: a compressed one could not be scrubbed
            return new Refusal(SecretsStage.EXTENSION_REFUSED, "accepted WebSocket extensions that were not offered: '"
                    + accepted + "' (expected: none)");
        }
        return null;
    }

    /** Flushes what {@link #head} wrote, at the end of the upstream read that carried it. */
    void readComplete() {
        if (headFlush == HeadFlush.AT_READ_END) {
            headFlush = HeadFlush.DONE;
            exchange.down().flush();
        }
    }

    /**
     * True once the upstream's last part of the response arrived (it may still be on its way to the client): the
     * upstream closing now (an HTTP/2 stream closes once both sides ended it) takes nothing from the exchange.
     */
    boolean upstreamComplete() {
        return upstreamComplete;
    }

    void content(HttpContent content) {
        if (stage == Stage.BODY && content instanceof LastHttpContent) {
            upstreamComplete = true;
        }
        switch (stage) {
            case UPGRADING -> content.release();      // the empty body of the 101; raw bytes follow
            case INTERIM -> {
                boolean last = content instanceof LastHttpContent;
                content.release();
                if (last) {
                    stage = Stage.AWAITING_HEAD;
                    exchange.lease().channel().read();
                }
            }
            case BODY -> body(content);
            case GATHERING -> gathered(content);
            default -> content.release();
        }
    }

    /**
     * A package document of a registry: its head waits, its body is gathered (never passed on unfiltered: an encoded
     * one, one past the size bound or one that does not parse is refused), then filtered off the loop.
     */
    private void gather(HttpResponse response, Channel upstream) {
        String encoding = response.headers().get(HttpHeaderNames.CONTENT_ENCODING);
        if (encoding != null && !encoding.strip().equalsIgnoreCase("identity")) {
            exchange.upstreamFailed(502, DocumentFilter.unreadable(), "upstream " + exchange.destination().text()
                    + ": package document with content-encoding '" + encoding + "' (expected: identity, as asked)");
            return;
        }
        held = response;
        stage = Stage.GATHERING;
        upstream.read();
    }

    private void gathered(HttpContent content) {
        DocumentFilter doc = exchange.document();
        boolean last = content instanceof LastHttpContent;
        if (!doc.append(exchange.down().channel().alloc(), content.content())) {
            exchange.upstreamFailed(502, DocumentFilter.unreadable(), "upstream " + exchange.destination().text()
                    + ": package document of '" + doc.packageName() + "' larger than max_document_bytes ("
                    + doc.registry().maxDocumentBytes() + ")");
            return;
        }
        if (!last) {
            exchange.lease().channel().read();
            return;
        }
        upstreamComplete = true;
        stage = Stage.FILTERING;
        Channel client = exchange.down().channel();
        doc.filter(exchange.context().clock().instant()).whenComplete((filtered, failure) ->
                client.eventLoop().execute(() -> filtered(filtered, failure)));
    }

    private void filtered(dev.sallyport.proxy.registry.FilteredDocument filtered, Throwable failure) {
        DocumentFilter doc = exchange.document();
        if (stage != Stage.FILTERING || !exchange.inProgress()) {
            return;                                   // the client left meanwhile
        }
        if (failure != null) {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                    ? c.getCause() : failure;
            exchange.upstreamFailed(502, DocumentFilter.unreadable(), "upstream " + exchange.destination().text()
                    + ": " + cause.getMessage());
            return;
        }
        RegistryStage.record(exchange.context(), exchange.audit(), doc.registry(), doc.packageName(),
                filtered.refused());
        RegistryStage.VERDICTS.put(doc.registry(), doc.packageName(), filtered.verdicts());
        HttpResponse response = held;
        held = null;
        HttpUtil.setTransferEncodingChunked(response, false);
        response.headers().set(HttpHeaderNames.CONTENT_LENGTH, filtered.length())
                .set(HttpHeaderNames.CONTENT_TYPE, doc.contentType(filtered))
                .remove(HttpHeaderNames.ETAG)
                .remove(HttpHeaderNames.CONTENT_MD5);
        if (doc.registry().ecosystem() == dev.sallyport.policy.Ecosystem.NPM && !filtered.refused().isEmpty()) {
            // not stored: npm prints a notice only from the network (and the next answer may differ)
            response.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store").set("npm-notice", dev.sallyport.proxy.registry.Refusals.notice(doc.registry(),
                    doc.packageName(), filtered.refused()));
        }
        framing = new ResponseFraming(true, framing.upstreamReusable());
        stage = Stage.BODY;
        exchange.down().send(response, false).addListener(abortOnFailure);
        body(new io.netty.handler.codec.http.DefaultLastHttpContent(
                io.netty.buffer.Unpooled.wrappedBuffer(filtered.body(), 0, filtered.length())));
    }

    private void body(HttpContent content) {
        exchange.countDown(content.content().readableBytes());
        if (exchange.secrets() == null) {
            forward(content);
            return;
        }
        try {
            exchange.secrets().accept(content);
        } catch (ResponseDecodeException e) {
            exchange.upstreamFailed(502, SecretReasons.RESPONSE_DECODE_FAILED,
                    "upstream " + exchange.destination().text() + ": " + e.getMessage());
            return;
        }
        pumpScrubbed();
    }

    /**
     * Writes the scrubbed body while the client keeps up: a decoded body is drawn out {@link #PUMP_BUDGET} bytes at
     * a time and only while the client's outbound buffer is below its high-water mark, so a client that does not
     * read holds at most that much of a body the proxy decoded. The next upstream read follows once all of it is out.
     */
    private void pumpScrubbed() {
        while (true) {
            List<Object> parts = new ArrayList<>(2);
            boolean drained;
            try {
                drained = exchange.secrets().drain(PUMP_BUDGET, parts);
            } catch (ResponseDecodeException e) {     // mid-body: the client connection closes without the last part
                exchange.upstreamFailed(502, SecretReasons.RESPONSE_DECODE_FAILED,
                        "upstream " + exchange.destination().text() + ": " + e.getMessage());
                return;
            }
            if (drained && !parts.isEmpty() && parts.getLast() instanceof LastHttpContent last) {
                for (int i = 0; i < parts.size() - 1; i++) {
                    exchange.down().send((HttpContent) parts.get(i), false);
                }
                forward(last);
                return;
            }
            for (Object part : parts) {
                exchange.down().send((HttpContent) part, false).addListener(abortOnFailure);
            }
            exchange.down().flush();
            if (drained) {
                readOnWhenWritable();
                return;
            }
            if (!exchange.down().channel().isWritable()) {
                waiting = Waiting.SCRUBBED_BODY;
                return;
            }
        }
    }

    private void forward(HttpContent content) {
        if (!(content instanceof LastHttpContent last)) {
            writeAndRead(content);
            return;
        }
        stage = Stage.LAST_SENT;
        Trailers.strip(last.trailingHeaders());
        boolean reusable = framing.upstreamReusable();
        exchange.down().send(last, true).addListener((ChannelFutureListener) f ->
                exchange.responseWritten(f.isSuccess(), reusable));
    }

    /**
     * Sends a part on and reads the next from upstream at once while the client's outbound buffer is below its
     * high-water mark; above it, {@link #downstreamWritable} reads on once the client has drained it.
     */
    private void writeAndRead(HttpObject part) {
        exchange.down().send(part, true).addListener(abortOnFailure);
        readOnWhenWritable();
    }

    private void readOnWhenWritable() {
        if (exchange.down().channel().isWritable()) {
            exchange.lease().channel().read();
        } else {
            waiting = Waiting.UPSTREAM_READ;
        }
    }

    /** The client drained its outbound buffer: go on with a scrubbed body, or read on from upstream. */
    void downstreamWritable() {
        Waiting was = waiting;
        waiting = Waiting.NOTHING;
        switch (was) {
            case SCRUBBED_BODY -> pumpScrubbed();
            case UPSTREAM_READ -> exchange.lease().channel().read();
            case NOTHING -> { }
        }
    }

    private void upgrade(HttpResponse response) {
        status = 101;
        stage = Stage.UPGRADING;
        HopHeaders.strip(response.headers(), true);
        Channel client = exchange.down().channel();
        exchange.down().send(new DefaultFullHttpResponse(response.protocolVersion(), response.status(),
                client.alloc().buffer(0), response.headers(), EmptyHttpHeaders.INSTANCE), true)
                .addListener((ChannelFutureListener) f -> {
                    if (f.isSuccess()) {
                        client.eventLoop().execute(exchange::upgraded);
                    } else {
                        exchange.upgradeFailed();
                    }
                });
    }

    /** Raw bytes the upstream sent after its 101, kept for the relay. */
    void earlyBytes(ByteBuf raw) {
        if (stage == Stage.UPGRADING) {
            earlyBytes.add(raw);
        } else {
            raw.release();
        }
    }

    ArrayDeque<ByteBuf> takeEarlyBytes() {
        ArrayDeque<ByteBuf> taken = new ArrayDeque<>(earlyBytes);
        earlyBytes.clear();
        return taken;
    }

    void close() {
        if (exchange.document() != null) {
            exchange.document().release();
        }
        earlyBytes.forEach(ReferenceCountUtil::release);
        earlyBytes.clear();
    }

    /**
     * How a response is delimited, read before its hop-by-hop fields go: {@code delimited} when its end can be
     * told without the connection closing (a length, chunked, or no body by status or method), and
     * {@code upstreamReusable} when the upstream also keeps the connection.
     */
    record ResponseFraming(boolean delimited, boolean upstreamReusable) {

        static ResponseFraming of(HttpResponse response, HttpMethod method) {
            boolean delimited = BodyFraming.delimited(response, method);
            return new ResponseFraming(delimited, delimited && HttpUtil.isKeepAlive(response));
        }
    }

}
