package dev.sallyport.proxy.inject;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Removes secret values from everything a response carries back to the client: status reason, header
 * names and values, body bytes and trailers, as they stream. See {@link StreamRedactor} for the matching
 * (bounded memory, split matches, length-preserving marker). On a sensitive exchange a gzip or deflate
 * body is decoded first (capped), sent uncompressed, and {@code Content-Encoding}/{@code Content-Length}
 * are dropped; any other content or transfer coding there fails closed with {@link ResponseDecodeException}.
 *
 * <p>Use {@link #scrub(HttpObject, List)} from a handler on the upstream side, or the three steps
 * {@link #onHead}, {@link #onContent}, {@link #onLast}. Reusable for a following response of the same
 * exchange (after a 1xx). Not thread-safe. {@link #close()} frees the native inflater.
 */
public final class ResponseScrubber implements AutoCloseable {

    private static final int PIECE = 64 * 1024;

    private final ByteBufAllocator alloc;
    private final PatternSet values;
    private final PatternSet extras;
    private final boolean sensitive;
    private final long maxDecoded;
    private StreamRedactor redactor;
    private InflatingDecoder decoder;
    /** Identity bodies: what {@link #accept} took and {@link #drain} has not handed on yet. */
    private ByteBuf held;
    private boolean bodySeen;

    ResponseScrubber(ByteBufAllocator alloc, PatternSet values, PatternSet extras, boolean sensitive, long maxDecoded) {
        if (maxDecoded <= 0) {
            throw new IllegalArgumentException("maxDecodedBytes: " + maxDecoded + " (expected: > 0)");
        }
        this.alloc = alloc;
        this.values = values;
        this.extras = extras;
        this.sensitive = sensitive;
        this.maxDecoded = maxDecoded;
    }

    /** False when there is nothing to remove and nothing to decode: bytes pass through untouched. */
    public boolean active() {
        return !values.isEmpty() || !extras.isEmpty();
    }

    /** Bytes replaced so far in bodies (for tests and metrics). */
    public long redactedBytes() {
        return redactor == null ? 0 : redactor.redactedBytes();
    }

    /**
     * Scrubs one message from upstream into {@code out}: the same head object (changed in place), new
     * {@link HttpContent}s for the body, a {@link LastHttpContent} with scrubbed trailers. Takes ownership
     * of {@code msg}'s content. A {@link FullHttpResponse} becomes head, contents and last.
     */
    public void scrub(HttpObject msg, List<Object> out) throws ResponseDecodeException {
        if (msg instanceof HttpResponse head) {
            onHead(head);
            if (!(msg instanceof HttpContent)) {
                out.add(head);
                return;
            }
            out.add(new DefaultHttpResponse(head.protocolVersion(), head.status(), head.headers()));
        }
        if (msg instanceof HttpContent content) {
            try {
                onContent(content.content().retain(), b -> out.add(new DefaultHttpContent(b)));
                if (content instanceof LastHttpContent last) {
                    onLast(last.trailingHeaders(), b -> out.add(new DefaultHttpContent(b)));
                    out.add(last.trailingHeaders().isEmpty() ? LastHttpContent.EMPTY_LAST_CONTENT
                            : new DefaultLastHttpContent(alloc.buffer(0), last.trailingHeaders()));
                }
            } finally {
                content.release();
            }
        }
    }

    /**
     * Before forwarding a response head: scrubs the reason phrase, removes headers whose name holds a
     * value, scrubs header values, and on a sensitive exchange sets up decoding. Throws (answer 502,
     * nothing forwarded yet) when the body is encoded in a way that cannot be scrubbed.
     */
    public void onHead(HttpResponse head) throws ResponseDecodeException {
        resetBody();
        HttpResponseStatus st = head.status();
        String reason = scrubText(st.reasonPhrase());
        if (!reason.equals(st.reasonPhrase())) {
            head.setStatus(new HttpResponseStatus(st.code(), reason));
        }
        scrubHeaders(head.headers());
        int code = st.code();
        if (sensitive && code >= 200 && code != 204 && code != 304) {
            planDecoding(head);
        }
    }

    /** Scrubs a body chunk (released here) into zero or more new buffers owned by {@code out}, all at once. */
    public void onContent(ByteBuf in, Consumer<? super ByteBuf> out) throws ResponseDecodeException {
        accept(in);
        drain(Long.MAX_VALUE, out);
    }

    /**
     * Takes a body chunk (released here) for {@link #drain}. Call only once {@link #drain} returned true for the
     * chunk before: a decoded body is drawn out under a budget, so the output of one small compressed chunk never
     * has to exist at once.
     */
    public void accept(ByteBuf in) throws ResponseDecodeException {
        try {
            if (!in.isReadable()) {
                return;
            }
            bodySeen = true;
            if (decoder != null) {
                byte[] bytes = new byte[in.readableBytes()];
                in.getBytes(in.readerIndex(), bytes);
                decoder.feed(bytes, 0, bytes.length);
            } else {
                held = held == null ? in.retain() : alloc.compositeBuffer(2).addComponents(true, held, in.retain());
            }
        } finally {
            in.release();
        }
    }

    /**
     * Hands on the scrubbed form of what {@link #accept} took, about {@code budget} bytes at most (in pieces of
     * about 64 KiB); true when all of it is out, false when the budget stopped it (call again).
     */
    public boolean drain(long budget, Consumer<? super ByteBuf> out) throws ResponseDecodeException {
        if (decoder == null && held == null) {
            return true;
        }
        if (!active() && decoder == null) {
            ByteBuf all = held;
            held = null;
            out.accept(all);
            return true;
        }
        Emitter emit = new Emitter(out);
        try {
            boolean done;
            if (decoder == null) {
                ByteBuf in = held;
                held = null;
                try {
                    redactor().feed(in, emit.buffer(in.readableBytes()));
                } finally {
                    in.release();
                }
                done = true;
            } else {
                done = decoder.pump((b, off, len) -> redactor().feed(b, off, len, emit.buffer(len)), budget);
            }
            emit.flush();
            return done;
        } catch (ResponseDecodeException | RuntimeException e) {
            emit.discard();
            throw e;
        }
    }

    /** Ends the body: emits what was held back and scrubs {@code trailers} in place. */
    public void onLast(HttpHeaders trailers, Consumer<? super ByteBuf> out) throws ResponseDecodeException {
        drain(Long.MAX_VALUE, out);     // nothing left when the caller drained as it went
        if (decoder != null && bodySeen) {
            decoder.finish();
        }
        if (redactor != null) {
            Emitter emit = new Emitter(out);
            redactor.finish(emit.buffer(256));
            emit.flush();
        }
        scrubHeaders(trailers);
        resetBody();
    }

    /** Scrubs header names (a header whose name holds a value is removed) and values, in place. */
    public void scrubHeaders(HttpHeaders headers) {
        if (!active() || headers.isEmpty()) {
            return;
        }
        List<Map.Entry<CharSequence, CharSequence>> all = new ArrayList<>(headers.size());
        boolean changed = false;
        var it = headers.iteratorCharSequence();
        while (it.hasNext()) {
            var h = it.next();
            byte[] name = RequestInspector.latin1(h.getKey());
            if (StreamRedactor.redactAll(values, extras, name) != name) {
                changed = true;
                continue;
            }
            byte[] v = RequestInspector.latin1(h.getValue());
            byte[] scrubbed = StreamRedactor.redactAll(values, extras, v);
            changed |= scrubbed != v;
            all.add(Map.entry(h.getKey(), scrubbed == v ? h.getValue() : new AsciiString(scrubbed, false)));
        }
        if (changed) {
            headers.clear();
            all.forEach(e -> headers.add(e.getKey(), e.getValue()));
        }
    }

    private String scrubText(String text) {
        if (!active()) {
            return text;
        }
        byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
        byte[] s = StreamRedactor.redactAll(values, extras, b);
        return s == b ? text : new String(s, StandardCharsets.ISO_8859_1);
    }

    private void planDecoding(HttpResponse head) throws ResponseDecodeException {
        HttpHeaders h = head.headers();
        for (String te : h.getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
            for (String coding : te.split(",")) {
                if (!coding.isBlank() && !coding.trim().equalsIgnoreCase("chunked")) {
                    throw new ResponseDecodeException("response transfer-encoding '" + coding.trim()
                            + "' cannot be scrubbed (expected: chunked)");
                }
            }
        }
        List<String> codings = new ArrayList<>();
        for (String ce : h.getAll(HttpHeaderNames.CONTENT_ENCODING)) {
            for (String c : ce.split(",")) {
                String t = c.trim().toLowerCase(Locale.ROOT);
                if (!t.isEmpty() && !t.equals("identity")) {
                    codings.add(t);
                }
            }
        }
        if (codings.isEmpty()) {
            return;
        }
        InflatingDecoder.Format f = switch (codings.size() == 1 ? codings.getFirst() : "") {
            case "gzip", "x-gzip" -> InflatingDecoder.Format.GZIP;
            case "deflate" -> InflatingDecoder.Format.DEFLATE;
            default -> throw new ResponseDecodeException("response content-encoding '" + String.join(", ", codings)
                    + "' cannot be scrubbed (expected: identity, gzip or deflate)");
        };
        decoder = new InflatingDecoder(f, maxDecoded);
        h.remove(HttpHeaderNames.CONTENT_ENCODING);
        h.remove(HttpHeaderNames.CONTENT_LENGTH);
        h.remove(HttpHeaderNames.CONTENT_MD5);
        String etag = h.get(HttpHeaderNames.ETAG);
        if (etag != null && !etag.startsWith("W/")) {
            h.set(HttpHeaderNames.ETAG, "W/" + etag);
        }
        if (head.protocolVersion().equals(HttpVersion.HTTP_1_1)) {
            HttpUtil.setTransferEncodingChunked(head, true);
        }
    }

    private StreamRedactor redactor() {
        if (redactor == null) {
            redactor = new StreamRedactor(values, extras);
        }
        return redactor;
    }

    private void resetBody() {
        redactor = null;
        bodySeen = false;
        if (held != null) {
            held.release();
            held = null;
        }
        if (decoder != null) {
            decoder.close();
            decoder = null;
        }
    }

    @Override
    public void close() {
        resetBody();
    }

    @Override
    public String toString() {
        return "ResponseScrubber[sensitive=" + sensitive + ", active=" + active() + "]";
    }

    /** Collects output into buffers of about {@link #PIECE} bytes and hands them on. */
    private final class Emitter {
        private final Consumer<? super ByteBuf> out;
        private ByteBuf current;

        Emitter(Consumer<? super ByteBuf> out) {
            this.out = out;
        }

        ByteBuf buffer(int hint) {
            if (current != null && current.readableBytes() >= PIECE) {
                flush();
            }
            if (current == null) {
                current = alloc.buffer(Math.max(256, Math.min(hint + 256, PIECE * 2)));
            }
            return current;
        }

        void discard() {
            if (current != null) {
                current.release();
                current = null;
            }
        }

        void flush() {
            if (current != null) {
                if (current.isReadable()) {
                    out.accept(current);
                } else {
                    current.release();
                }
                current = null;
            }
        }
    }
}
