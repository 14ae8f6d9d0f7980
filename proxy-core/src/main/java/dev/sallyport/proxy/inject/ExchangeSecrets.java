package dev.sallyport.proxy.inject;

import dev.sallyport.proxy.inject.InjectionResult.Injected;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Objects;

/**
 * The secrets side of one exchange (one request and its response) to one host over one {@link UpstreamLeg}.
 * Create one per request with {@link SecretStore#exchange(String, UpstreamLeg)}; not thread-safe (it lives on
 * one event loop).
 *
 * <ol>
 *   <li>{@link #inject(HttpRequest)} before the request goes upstream: swaps placeholders or refuses;</li>
 *   <li>{@link #bodyGuard()} for each request body chunk, before forwarding it ({@link #messageGuard()} for each
 *       WebSocket message from the client);</li>
 *   <li>{@link #responseScrubber} for the response head, chunks and trailers.</li>
 * </ol>
 */
public final class ExchangeSecrets {

    private final SecretStore store;
    private final String host;
    private final UpstreamLeg leg;
    private final String client;
    private final boolean sensitive;
    private final List<byte[]> sentTokens = new ArrayList<>(1);
    private final Set<String> forwarded = new LinkedHashSet<>(2);
    private List<String> injected = List.of();

    ExchangeSecrets(SecretStore store, String host, UpstreamLeg leg, String client) {
        this.store = store;
        this.host = host;
        this.leg = Objects.requireNonNull(leg, "leg");
        this.client = Objects.requireNonNull(client, "client");
        this.sensitive = store.sensitive(host);
    }

    /** The normalized host this exchange is bound to. */
    public String host() {
        return host;
    }

    /** True if some secret is bound to this host: identity encoding is asked for and responses are decoded. */
    public boolean sensitive() {
        return sensitive;
    }

    /** Names injected by the last successful {@link #inject} (empty before). */
    public List<String> injected() {
        return injected;
    }

    /**
     * Names of the secrets whose placeholder went on unchanged in this exchange so far (on their own hosts, outside
     * the listed headers): in the head, the body, the trailers or a WebSocket message.
     */
    public List<String> forwarded() {
        return List.copyOf(forwarded);
    }

    /**
     * {@link #inject(HttpHeaders, String)} with the request's headers, and its method and raw target
     * ({@code uri()}) as the request line to search (both are {@code url} for refusals).
     */
    public InjectionResult inject(HttpRequest request) {
        return inject(request.headers(), request.method().name() + " " + request.uri());
    }

    /**
     * Looks for placeholders (and real values) in {@code headers} and {@code rawTarget} (path and query as
     * received, or the absolute-form URI). On {@link Injected} the headers were changed in place: placeholders
     * replaced, and on a sensitive host {@code Accept-Encoding: identity} set. On {@link Refused} nothing changed.
     */
    public InjectionResult inject(HttpHeaders headers, String rawTarget) {
        if (store.isEmpty()) {
            if (sensitive) {    // a host that received a value before a reload removed its secret
                forceIdentityEncoding(headers);
            }
            return new Injected(List.of());
        }
        RequestInspector.Outcome o = new RequestInspector(store, host, leg, client).inspect(headers, rawTarget);
        if (o.refusal() != null) {
            return o.refusal();
        }
        if (o.changed()) {
            headers.clear();
            for (RequestInspector.Header h : o.headers()) {
                headers.add(h.name(), h.value());
            }
        }
        if (sensitive) {
            forceIdentityEncoding(headers);
        }
        sentTokens.addAll(o.basicTokens());
        injected = o.injected();
        forwarded.addAll(o.forwarded());
        return new Injected(injected, o.forwarded());
    }

    /**
     * Asks upstream not to compress: {@code Accept-Encoding: identity}, no {@code TE} codings, and no
     * {@code Sec-WebSocket-Extensions} (permessage-deflate frames could not be scrubbed).
     */
    public static void forceIdentityEncoding(HttpHeaders headers) {
        headers.set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        headers.remove(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
        if (headers.contains(HttpHeaderNames.TE)) {
            boolean trailers = headers.containsValue(HttpHeaderNames.TE, HttpHeaderValues.TRAILERS, true);
            headers.remove(HttpHeaderNames.TE);
            if (trailers) {
                headers.set(HttpHeaderNames.TE, HttpHeaderValues.TRAILERS);
            }
        }
    }

    /**
     * Checks a request's trailer fields: a trailer is never a place where a placeholder is swapped, so a
     * placeholder there is judged like one in the body ({@code secret_wrong_host} toward a host the secret is not
     * bound to, else forwarded unchanged or {@code secret_wrong_place}, as the secret says), and so is a real value
     * toward another host. Null when it may go on.
     */
    public Refused checkTrailers(HttpHeaders trailers) {
        if (store.isEmpty() || trailers.isEmpty()) {
            return null;
        }
        RequestBodyGuard guard = bodyGuard();
        StringBuilder text = new StringBuilder();
        trailers.forEach(h -> text.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n"));
        io.netty.buffer.ByteBuf bytes = io.netty.buffer.Unpooled.wrappedBuffer(RequestInspector.latin1(text));
        Refused r = guard.check(bytes);
        if (r == null) {
            r = guard.finish();
        }
        return r == null ? null : new Refused(r.reason(), r.secret(), "trailer");
    }

    /** A fresh streaming checker for this request's body. */
    public RequestBodyGuard bodyGuard() {
        return new RequestBodyGuard(store, host, client, "body", forwarded);
    }

    /**
     * A fresh checker for one WebSocket message the client sends on this exchange's connection (the payloads of
     * its fragments in order, unmasked): the same rule as a request body.
     */
    public RequestBodyGuard messageGuard() {
        return new RequestBodyGuard(store, host, client, "websocket message", forwarded);
    }

    /**
     * A fresh scrubber for this exchange's response(s). It removes every value the process knows (those of the
     * store in force and those a reload retired, as they are now) and the exact Basic credentials sent on this
     * exchange, and, on a sensitive host, decodes gzip/deflate bodies of at most {@code maxDecodedBytes}.
     */
    public ResponseScrubber responseScrubber(ByteBufAllocator alloc, long maxDecodedBytes) {
        List<PatternSet.Pattern> extras = new ArrayList<>(sentTokens.size());
        for (byte[] t : sentTokens) {
            extras.add(new PatternSet.Pattern(t, -1, PatternSet.Kind.VALUE));
        }
        PatternSet extraSet = extras.isEmpty() ? PatternSet.EMPTY : new PatternSet(extras);
        return new ResponseScrubber(alloc, store.scrubPatterns(), extraSet, sensitive, maxDecodedBytes);
    }

    @Override
    public String toString() {
        return "ExchangeSecrets[host=" + host + ", leg=" + leg + ", sensitive=" + sensitive + ", injected="
                + injected + "]";
    }
}
