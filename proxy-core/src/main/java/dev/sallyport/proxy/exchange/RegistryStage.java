package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.RegistryReasons;
import dev.sallyport.policy.RegistryRequest;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.registry.Refusals;
import dev.sallyport.proxy.registry.SimpleIndex;
import dev.sallyport.proxy.registry.NpmDocument;
import dev.sallyport.proxy.registry.VerdictCache;
import dev.sallyport.proxy.registry.VersionVerdict;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;
import java.util.Map;

/**
 * The registry stage of the core, for a request the policy allowed to a host of a {@code registries:} entry: a
 * package document is fetched in full and filtered on its way back ({@link DocumentFilter}); a file of a version
 * the rules refuse is answered {@code 403} before anything goes upstream; a file whose verdict needs its document
 * (a minimum release age, npm's checks) waits until the document was filtered, fetched through the core by the
 * proxy itself when no verdict is remembered ({@link DocumentFetch}). Everything else passes.
 */
final class RegistryStage {

    /** What the stage does with one request. */
    sealed interface Plan {}

    /** Not a document or a file: on, unfiltered. */
    record Pass() implements Plan {}

    /** Answer 403 now. */
    record Refuse(String packageName, String version, String reason) implements Plan {}

    /** A package document: filtered on its way back. */
    record Filter(DocumentFilter filter) implements Plan {}

    /** A file whose verdict comes from its document, which is fetched first. */
    record Await(String packageName, String version) implements Plan {}

    static final VerdictCache VERDICTS = new VerdictCache();

    private RegistryStage() {}

    static Plan plan(ExchangeRequest request, Registry registry) {
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            return new Pass();
        }
        boolean documentHost = registry.hosts().contains(request.target().host());
        return switch (RegistryRequest.of(registry, request.originForm(), documentHost)) {
            case RegistryRequest.Other o -> new Pass();
            case RegistryRequest.Document d -> {
                String refused = registry.packageRefusal(d.packageName());
                yield refused != null ? new Refuse(d.packageName(), null, refused)
                        : new Filter(new DocumentFilter(registry, d.packageName(), answerForm(registry,
                                request.headers())));
            }
            case RegistryRequest.File f -> file(registry, f.packageName(), f.version());
            case RegistryRequest.UnreadableFile u -> new Refuse(u.packageName(), null, RegistryReasons.VERSION_UNKNOWN);
        };
    }

    /** The verdict of a file from its name and number, then from its document's remembered verdicts. */
    private static Plan file(Registry registry, String packageName, String version) {
        String refused = registry.versionRefusal(packageName, version);
        if (refused != null) {
            return new Refuse(packageName, version, refused);
        }
        if (!needsDocument(registry)) {
            return new Pass();
        }
        Map<String, String> verdicts = VERDICTS.get(registry, packageName);
        if (verdicts == null) {
            return new Await(packageName, version);
        }
        return afterDocument(verdicts, packageName, version);
    }

    /** The plan for a file once its document's verdicts are known (null: the document could not be had). */
    static Plan afterDocument(Map<String, String> verdicts, String packageName, String version) {
        if (verdicts == null) {
            return new Refuse(packageName, version, RegistryReasons.VERSION_UNKNOWN);
        }
        String reason = verdicts.get(version);
        if (reason == null) {
            return new Refuse(packageName, version, RegistryReasons.VERSION_UNKNOWN);
        }
        return reason.isEmpty() ? new Pass() : new Refuse(packageName, version, reason);
    }

    private static boolean needsDocument(Registry registry) {
        return !registry.minReleaseAge().isZero() || registry.installScripts() || registry.provenance();
    }

    /** The form the client asked for: npm's abbreviated document, PyPI's JSON page, or the default. */
    private static DocumentFilter.Form answerForm(Registry registry, HttpHeaders headers) {
        String accept = String.join(",", headers.getAll(HttpHeaderNames.ACCEPT));
        if (registry.ecosystem() == Ecosystem.NPM) {
            return accept.contains(NpmDocument.ABBREVIATED) ? DocumentFilter.Form.ABBREVIATED : DocumentFilter.Form.FULL;
        }
        return accept.contains(SimpleIndex.JSON_TYPE) ? DocumentFilter.Form.FULL
                : accept.contains(SimpleIndex.HTML_TYPE) ? DocumentFilter.Form.HTML : DocumentFilter.Form.TEXT_HTML;
    }

    /**
     * The request as it goes upstream for a document: always the full, unencoded, unconditional form (the filter
     * reads publish times, which only the full form has, and answers every client with what it filtered now).
     */
    static void documentHead(Registry registry, HttpHeaders upstream) {
        upstream.set(HttpHeaderNames.ACCEPT, registry.ecosystem() == Ecosystem.NPM ? "application/json"
                : SimpleIndex.JSON_TYPE);
        upstream.set(HttpHeaderNames.ACCEPT_ENCODING, "identity");
        upstream.remove(HttpHeaderNames.IF_NONE_MATCH);
        upstream.remove(HttpHeaderNames.IF_MODIFIED_SINCE);
        upstream.remove(HttpHeaderNames.RANGE);
        upstream.remove(HttpHeaderNames.IF_RANGE);
    }

    /** The 403 a refused document or file gets, its reason in X-Sallyport-Reason, body and reason phrase. */
    static FullHttpResponse answer(ByteBufAllocator alloc, Registry registry, Refuse r) {
        String message = Refusals.message(registry, r.packageName(), r.version(), r.reason());
        byte[] body = Refusals.body(registry, message);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                new HttpResponseStatus(403, "Forbidden (" + message.replace('\n', ' ') + ")"),
                alloc.buffer(body.length).writeBytes(body));
        response.headers().set(Responses.REASON_HEADER, r.reason())
                .set(HttpHeaderNames.CONTENT_TYPE, Refusals.contentType(registry))
                .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        return response;
    }

    /** One {@code registry} audit record per version refused or filtered out, with the request's id. */
    static void record(ProxyContext context, AuditRecord audit, Registry registry, String packageName,
                       List<VersionVerdict> refused) {
        AuditFields f = audit.fields();
        for (VersionVerdict v : refused) {
            context.emit(new ProxyEvent.VersionRefused(context.clock().instant(), new AuditFields(f.id(), f.client(),
                    f.identity(), f.host(), f.port(), null, f.method(), f.path(), null, "deny", registry.ruleName(),
                    v.reason(), f.tls(), f.sni(), null, null, null, null, null, f.protocol(), null, f.arrival(),
                    registry.ecosystem().key(), packageName, v.version())));
        }
    }
}
