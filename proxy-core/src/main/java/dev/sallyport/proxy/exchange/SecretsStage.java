package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.ExchangeSecrets;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.inject.RequestBodyGuard;
import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.ResponseScrubber;
import dev.sallyport.proxy.inject.SecretStore;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.websocket.MessageGuardHandler;
import dev.sallyport.proxy.websocket.MessageScrubHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Consumer;

/**
 * The secrets stage of every {@link Exchange}, where the core calls {@code dev.sallyport.proxy.inject}:
 * placeholders swapped in the request head (or the request refused), the request body checked chunk by chunk
 * before it goes upstream, and the response (head, body, trailers, or the messages of a WebSocket) scrubbed of
 * every real value before it goes to the client; a WebSocket's client messages are checked like a body. Lives on
 * the exchange's event loop.
 */
final class SecretsStage {

    private static final long DEFAULT_MAX_DECODED = 64L * 1024 * 1024;

    /** A {@code 101} accepted WebSocket extensions the proxy did not offer (it offers none): answered 502. */
    static final String EXTENSION_REFUSED = "websocket_extension_refused";

    private final ExchangeSecrets secrets;
    private List<String> injected = List.of();
    private AuditRecord audit;          // set by inject: where forwarded placeholders are recorded
    private int forwardedRecorded;
    private RequestBodyGuard guard;     // made at the first body chunk: most requests have none
    private ByteBuf held;               // request body bytes the guard has not judged yet
    private ResponseScrubber scrubber;
    private HttpHeaders trailers;
    private boolean ended;
    private ByteBufAllocator alloc;
    private long maxDecoded;

    private SecretsStage(ExchangeSecrets secrets) {
        this.secrets = secrets;
    }

    /**
     * The step for a request to {@code host} (normalized, bound to the CONNECT target) that goes upstream over
     * {@code leg}; null when there is nothing to inject, refuse or scrub (no secrets now, and no value
     * loaded before a reload removed them).
     */
    static SecretsStage open(SecretStore store, String host, UpstreamLeg leg, String client) {
        return store.idle() ? null : new SecretsStage(store.exchange(host, leg, client));
    }

    /**
     * Swaps placeholders in {@code head} (the request as it will go upstream). Returns the refusal (audited with the
     * secret's name, nothing changed), or null. The names injected count only once the head went out
     * ({@link #sent}); placeholders that go on unchanged are recorded in {@code audit} now, and those the body or a
     * WebSocket message carries as they are seen.
     */
    InjectionResult.Refused inject(HttpRequest head, AuditRecord audit, ProxyContext context, ByteBufAllocator alloc) {
        this.audit = audit;
        return switch (secrets.inject(head)) {
            case InjectionResult.Refused r -> {
                audit.secrets(r.secrets());
                yield r;
            }
            case InjectionResult.Injected i -> {
                injected = i.secrets();
                recordForwarded();
                long cap = context.policy().proxy().limits().maxBodyBytes();
                this.alloc = alloc;
                maxDecoded = cap > 0 ? cap : DEFAULT_MAX_DECODED;
                scrubber = secrets.responseScrubber(alloc, maxDecoded);
                if (head.headers().contains(HttpHeaderNames.UPGRADE)) {
                    // every frame must be readable to be scrubbed and checked: no permessage-deflate, no extension
                    head.headers().remove(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
                }
                yield null;
            }
        };
    }

    /**
     * The head carrying the injected values was written upstream: only now do they count (audit field and one
     * {@code SecretInjected} event per name). A request refused at the dial check never injected anything.
     */
    void sent(AuditRecord audit, ProxyContext context) {
        if (!injected.isEmpty()) {
            audit.secrets(injected);
            injected.forEach(s -> context.emit(new ProxyEvent.SecretInjected(context.clock().instant(), s)));
            injected = List.of();
        }
    }

    /** True when this stage's secrets are bound to {@code host} (the destination the exchange dialed). */
    boolean boundTo(String host) {
        return secrets.host().equals(host);
    }

    /**
     * Checks one request body part (and the trailers of the last) and adds to {@code out} what may go upstream now:
     * the bytes the guard has judged, in order. The unjudged tail (shorter than the longest placeholder form) waits
     * for the next part, so a placeholder that ends a part is never forwarded before it is seen whole; the last part
     * releases the rest with the trailers. Does not consume {@code content} (what it adds to {@code out} it
     * retained); returns the refusal (nothing added), or null.
     */
    InjectionResult.Refused checkBody(HttpContent content, List<HttpContent> out) {
        if (guard == null) {
            guard = secrets.bodyGuard();
        }
        InjectionResult.Refused r = guard.check(content.content());
        if (r == null && content instanceof LastHttpContent last) {
            r = guard.finish();
            if (r == null) {
                r = secrets.checkTrailers(last.trailingHeaders());
            }
        }
        if (r != null) {
            releaseHeld();
            return r;
        }
        recordForwarded();
        if (content instanceof LastHttpContent) {
            if (held != null) {
                out.add(new DefaultHttpContent(held));
                held = null;
            }
            out.add(content.retain());
            return null;
        }
        ByteBuf in = content.content();
        ByteBuf all = held == null ? in.retainedDuplicate() : Unpooled.wrappedBuffer(held, in.retainedDuplicate());
        held = null;
        int tail = Math.min(guard.unjudged(), all.readableBytes());
        int now = all.readableBytes() - tail;
        if (tail > 0) {     // a copy: at most one placeholder's length
            held = in.alloc().buffer(tail).writeBytes(all, all.readerIndex() + now, tail);
        }
        if (now > 0) {
            all.writerIndex(all.readerIndex() + now);
            out.add(new DefaultHttpContent(all));
        } else {
            all.release();
        }
        return null;
    }

    /** Names the placeholders that went on unchanged so far in the exchange's audit record (when there are new ones). */
    void recordForwarded() {
        List<String> forwarded = secrets.forwarded();
        if (audit != null && forwarded.size() != forwardedRecorded) {
            forwardedRecorded = forwarded.size();
            audit.placeholdersForwarded(forwarded);
        }
    }

    private void releaseHeld() {
        if (held != null) {
            held.release();
            held = null;
        }
    }

    /** Scrubs a response head in place; throws (answer 502) when its body could not be scrubbed. */
    void scrubHead(HttpResponse head) throws ResponseDecodeException {
        scrubber.onHead(head);
    }

    /**
     * Takes one response body part (ownership) for {@link #drain}; call only once the part before is drained. The
     * trailers of the last part are kept for the end.
     */
    void accept(HttpContent content) throws ResponseDecodeException {
        if (content instanceof LastHttpContent last) {
            trailers = last.trailingHeaders();
            ended = true;
        }
        scrubber.accept(content.content().retain());
        content.release();
    }

    /**
     * The scrubbed body parts of what {@link #accept} took, about {@code budget} bytes; once the body ended and all
     * of it is out, the closing bytes and the last part (trailers scrubbed) too. True when nothing is left.
     */
    boolean drain(long budget, List<Object> out) throws ResponseDecodeException {
        try {
            boolean done = scrubber.drain(budget, b -> out.add(new DefaultHttpContent(b)));
            if (done && ended) {
                ended = false;
                scrubber.onLast(trailers, b -> out.add(new DefaultHttpContent(b)));
                out.add(trailers.isEmpty() ? LastHttpContent.EMPTY_LAST_CONTENT
                        : new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, trailers));
            }
            return done;
        } catch (ResponseDecodeException | RuntimeException e) {
            out.forEach(ReferenceCountUtil::release);
            out.clear();
            throw e;
        }
    }

    /** The handler that scrubs the server's WebSocket messages (upstream side, before the relay). */
    ChannelHandler messageScrubber() {
        return new MessageScrubHandler(() -> secrets.responseScrubber(alloc, maxDecoded));
    }

    /**
     * The handler that checks the client's WebSocket messages (client side, before the relay); {@code refused}
     * audits a refusal, after which the WebSocket is closed (1008) and {@code upstream} with it.
     */
    ChannelHandler messageGuard(Consumer<InjectionResult.Refused> refused, Channel upstream) {
        return new MessageGuardHandler(secrets::messageGuard, refused, upstream);
    }

    /** Frees the scrubber's decoder and any request bytes still held (once the exchange is over). */
    void close() {
        releaseHeld();
        if (scrubber != null) {
            scrubber.close();
        }
    }

    @Override
    public String toString() {
        return "SecretsStage[" + secrets + "]";
    }
}
