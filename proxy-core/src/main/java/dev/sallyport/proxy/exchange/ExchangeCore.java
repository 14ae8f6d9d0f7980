package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Registry;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.inject.SecretReasons;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.limits.ClientKey;
import dev.sallyport.proxy.limits.ClientSlots;
import dev.sallyport.proxy.registry.VersionVerdict;
import dev.sallyport.proxy.reload.Snapshot;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.Dialer;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * Where every front end hands its requests: the core alone decides, dials, injects, relays, scrubs and records, in
 * one order, whatever protocol the request came in. For each request it takes one {@link Snapshot} (policy and
 * secrets), runs {@link RequestDecision}, builds the request as it will go upstream and lets the secrets stage
 * swap placeholders (or refuse), then an {@link Exchange} dials, checks the dialed address, admits the decision to
 * the audit log and relays. A front end only turns its protocol into an {@link ExchangeRequest} and a
 * {@link Downstream}; it cannot skip a stage because it never sees one.
 */
public final class ExchangeCore {

    private static final String H2 = "h2";

    private final ProxyContext context;
    private final Dialer connector;

    public ExchangeCore(ProxyContext context, Dialer connector) {
        this.context = context;
        this.connector = connector;
    }

    public ProxyContext context() {
        return context;
    }

    /**
     * Starts an exchange for {@code request}; its response comes through {@code down}. Returns the exchange, or
     * null when the request was refused at once (recorded, and answered through {@code down}).
     */
    public Exchange start(ExchangeRequest request, Downstream down) {
        AuditRecord audit = record(request.origin(), request.method(), request.originForm());
        audit.target(request.target().host(), request.target().port());
        ClientKey client = ClientIdentity.limitKey(down.channel());
        if (!context.tryTakeExchange(client)) {    // each exchange holds an upstream connection: an h2 stream too
            refuse(audit, 429, ClientSlots.EXCHANGE_LIMIT, down, false);
            return null;
        }
        Exchange started = decideAndDial(request, down, audit);
        if (started == null) {
            context.exchangeReleased(client);
        }
        return started;
    }

    /** The stages before the dial; null when the request was refused (recorded and answered). */
    private Exchange decideAndDial(ExchangeRequest request, Downstream down, AuditRecord audit) {
        if (context.draining()) {
            refuse(audit, 503, "shutting_down", down, false);
            return null;
        }
        if (!context.auditAccepting()) {
            refuse(audit, 503, "audit_unavailable", down, false);
            return null;
        }
        Snapshot snapshot = context.snapshot();   // decision, dial check, injection and scrubbing all from this one
        ClientIdentity identity = request.origin().identity();
        switch (RequestDecision.decide(request, identity.engine(snapshot.engine()))) {
            case RequestDecision.Refuse r -> {
                if (r.decision() != null) {
                    audit.decision(r.decision());
                }
                refuse(audit, r.status(), r.reason(), down, false);
                return null;
            }
            case RequestDecision.Allow a -> audit.decision(a.decision());
        }
        Registry registry = snapshot.engine().registry(request.target().host(), request.target().port());
        RegistryStage.Plan plan = registry == null ? null : RegistryStage.plan(request, registry);
        if (plan instanceof RegistryStage.Refuse r) {
            answer(audit, registry, r, down);
            return null;
        }
        GitStage.Plan git = GitStage.plan(request, snapshot.engine().git(request.target().host(),
                request.target().port()));
        if (git instanceof GitStage.Refuse r) {
            GitStage.record(audit, r);
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
            if (!request.body().empty()) {      // its body unread: the connection closes after the answer
                down.refuse(403, r.reason(), GitStage.message(r.rule(), r.repository(), r.reason()), false);
                return null;
            }
            io.netty.handler.codec.http.FullHttpResponse response = GitStage.answer(down.channel().alloc(), r);
            down.channel().eventLoop().execute(() -> down.send(response, true)
                    .addListener((io.netty.channel.ChannelFutureListener) f -> down.ended(f.isSuccess())));
            return null;
        }
        boolean websocket = request.upgrade() == ExchangeRequest.Upgrade.WEBSOCKET;
        boolean tls = request.leg() == UpstreamLeg.TLS;
        // HTTP/2 toward the upstream when the client speaks it (and the server chooses it); WebSocket needs HTTP/1.1
        boolean mayH2 = tls && !websocket && H2.equals(request.origin().protocol());
        HttpRequest head = upstreamHead(request, websocket, mayH2);
        SecretsStage secrets = SecretsStage.open(snapshot.secrets(), request.target().host(), request.leg(),
                identity.policy());
        InjectionResult.Refused refused = secrets == null ? null
                : secrets.inject(head, audit, context, down.channel().alloc());
        boolean bodyless = request.body().empty();
        if (refused != null) {
            // a missing required secret on a request without a body leaves the connection (and the tunnel) open
            refuse(audit.denied(refused.reason()), 403, refused.reason(), down,
                    refused.reason().equals(SecretReasons.REQUIRED) && bodyless);
            return null;
        }
        Destination dest = new Destination(request.target().host(), request.target().port(), tls, true, mayH2,
                websocket);
        // The request's decision is recorded once the dial check has run (Exchange.upstreamReady): an address
        // denied by network.deny must be counted as a deny, not as the rule's allow.
        Exchange exchange = new Exchange(context, connector, down, audit, dest, head, secrets, request.upgrade());
        if (git instanceof GitStage.Inspect i) {
            exchange.gitPush(new GitPushGate(i.rule(), i.repository(), audit, down.channel().alloc()),
                    () -> connector.acquire(dest, snapshot.engine(), down.channel().eventLoop(), audit.client()));
            return exchange;
        }
        switch (plan) {
            case RegistryStage.Filter f -> {
                RegistryStage.documentHead(registry, head.headers());
                exchange.filterDocument(f.filter());
            }
            case RegistryStage.Await w -> {
                exchange.dialAfter(DocumentFetch.fetch(this, request, down, registry, w.packageName())
                        .thenApply(ignored -> {
                            RegistryStage.Plan after = RegistryStage.afterDocument(
                                    RegistryStage.VERDICTS.get(registry, w.packageName()), w.packageName(), w.version());
                            if (!(after instanceof RegistryStage.Refuse r)) {
                                return null;
                            }
                            RegistryStage.record(context, audit, registry, r.packageName(),
                                    List.of(new VersionVerdict(r.version(), r.reason())));
                            return RegistryStage.answer(down.channel().alloc(), registry, r);
                        }), () -> connector.acquire(dest, snapshot.engine(), down.channel().eventLoop(),
                                audit.client()));
                return exchange;
            }
            case null, default -> { }
        }
        exchange.dial(connector.acquire(dest, snapshot.engine(), down.channel().eventLoop(), audit.client()));
        return exchange;
    }

    /** A registry's refusal: recorded (the request, and the version it names), answered after this call returns. */
    private void answer(AuditRecord audit, Registry registry, RegistryStage.Refuse r, Downstream down) {
        audit.denied(r.reason()).status(403);
        RegistryStage.record(context, audit, registry, r.packageName(),
                List.of(new VersionVerdict(r.version(), r.reason())));
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
        io.netty.handler.codec.http.FullHttpResponse response = RegistryStage.answer(down.channel().alloc(), registry,
                r);
        down.channel().eventLoop().execute(() -> down.send(response, true)
                .addListener((io.netty.channel.ChannelFutureListener) f -> down.ended(f.isSuccess())));
    }

    /**
     * Records and answers a request its front end could not read into an {@link ExchangeRequest} (malformed, a
     * target that names another host, a protocol it refuses). {@code method}, {@code path} and {@code target} are
     * what could be read (nullable).
     */
    public void refuseUnread(ExchangeRequest.Origin origin, String method, String path, Authority target, int status,
                             String reason, Downstream down) {
        AuditRecord audit = record(origin, method, path);
        if (target != null) {
            audit.target(target.host(), target.port());
        }
        refuse(audit, status, reason, down, false);
    }

    /**
     * Records a request its front end's protocol refused by itself before anything of it could be read (an HTTP/2
     * stream its codec reset): the answer was the protocol's, so nothing is answered here.
     */
    public void recordRefused(ExchangeRequest.Origin origin, Authority target, int status, String reason) {
        AuditRecord audit = record(origin, null, null).target(target.host(), target.port()).denied(reason)
                .status(status);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
    }

    private AuditRecord record(ExchangeRequest.Origin origin, String method, String path) {
        AuditRecord audit = new AuditRecord(context.nextId(), origin.client()).identity(origin.identity().name()).tls(origin.tls()).sni(origin.sni())
                .protocol(origin.protocol()).arrival(origin.arrival());
        if (method != null) {
            audit.request(method, path == null ? null : pathOnly(path));
        }
        return audit;
    }

    private void refuse(AuditRecord audit, int status, String reason, Downstream down, boolean keepOpen) {
        if (audit.decision() == null) {
            audit.denied(reason);
        } else {
            audit.reason(reason);
        }
        audit.status(status);
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "request", audit.fields()));
        down.refuse(status, reason, null, keepOpen);
    }

    /**
     * The request as it goes upstream: origin-form target, the end-to-end fields (hop-by-hop ones removed), and the
     * framing the front end read, set here: never a copied header. Toward an upstream that may speak HTTP/2,
     * {@code te: trailers} stays (gRPC servers require it; HTTP/2 carries it end to end).
     */
    private static HttpRequest upstreamHead(ExchangeRequest request, boolean websocket, boolean mayH2) {
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(request.method()),
                request.originForm());
        head.headers().set(request.headers());
        boolean trailers = mayH2 && acceptsTrailers(request.headers());
        HopHeaders.strip(head.headers(), false);
        if (trailers) {
            head.headers().set(HttpHeaderNames.TE, HttpHeaderValues.TRAILERS);
        }
        head.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
        head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        switch (request.body()) {
            case ExchangeRequest.BodyShape.None n -> { }
            case ExchangeRequest.BodyShape.Length l -> head.headers().set(HttpHeaderNames.CONTENT_LENGTH, l.bytes());
            case ExchangeRequest.BodyShape.Stream s ->
                    head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        if (websocket) {
            head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
            head.headers().set(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET);
        }
        return head;
    }

    /** True when the client's {@code TE} field names {@code trailers}. */
    private static boolean acceptsTrailers(HttpHeaders headers) {
        for (String te : headers.getAll(HttpHeaderNames.TE)) {
            for (String token : te.split(",")) {
                String name = token.strip();
                int semicolon = name.indexOf(';');
                if ((semicolon < 0 ? name : name.substring(0, semicolon).strip()).equalsIgnoreCase("trailers")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The path of a request target without scheme, authority or query (what the audit record may hold). */
    static String pathOnly(String uri) {
        String path = uri;
        int scheme = path.indexOf("://");
        if (scheme > 0 && scheme < 8) {
            int slash = path.indexOf('/', scheme + 3);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        int q = path.indexOf('?');
        return q < 0 ? path : path.substring(0, q);
    }
}
