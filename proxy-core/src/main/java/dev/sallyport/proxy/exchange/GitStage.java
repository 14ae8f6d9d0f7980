package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.GitReasons;
import dev.sallyport.policy.GitRequest;
import dev.sallyport.policy.GitRule;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.internal.AuditRecord;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The git stage of the core, for a request the policy allowed to a host of {@code git:} entries: the discovery of
 * a push is answered {@code 403} (a message {@code git} prints as {@code remote: ...}) when the deciding entry
 * refuses pushes to the repository; a push ({@code POST .../git-receive-pack}) whose entry may allow it holds its
 * dial until {@link GitPushGate} has read the ref updates at the start of the body and decided them; fetches,
 * clones and everything else pass.
 */
final class GitStage {

    /** What the stage does with one request. */
    sealed interface Plan {}

    /** Not a push: on. */
    record Pass() implements Plan {}

    /** Refused before anything is read or sent: {@code rule} nullable (no entry names the repository). */
    record Refuse(GitRule rule, String repository, String reason, String detail) implements Plan {}

    /** A push whose ref updates decide: the gate reads them before the dial. */
    record Inspect(GitRule rule, String repository) implements Plan {}

    private GitStage() {}

    private static final Pass PASS = new Pass();

    /** The plan for {@code request}; {@code entries} those of its host and port (none: it passes unread). */
    static Plan plan(ExchangeRequest request, List<GitRule> entries) {
        if (entries.isEmpty()) {
            return PASS;
        }
        return switch (GitRequest.of(request.method(), request.originForm())) {
            case GitRequest.Other o -> PASS;
            case GitRequest.Unreadable u -> new Refuse(null, null, GitReasons.REQUEST_UNREADABLE, u.why());
            case GitRequest.PushDiscovery d -> {
                GitRule rule = GitRule.first(entries, d.repository());
                String refused = GitRule.discoveryRefusal(rule);
                yield refused == null ? PASS : new Refuse(rule, d.repository(), refused, null);
            }
            case GitRequest.Push p -> {
                GitRule rule = GitRule.first(entries, p.repository());
                String refused = GitRule.discoveryRefusal(rule);
                if (refused == null && encoded(request.headers())) {
                    yield new Refuse(rule, p.repository(), GitReasons.BODY_ENCODED, "the push body has Content-Encoding "
                            + request.headers().get(HttpHeaderNames.CONTENT_ENCODING) + " (expected: none)");
                }
                yield refused == null ? new Inspect(rule, p.repository()) : new Refuse(rule, p.repository(), refused,
                        null);
            }
        };
    }

    private static boolean encoded(HttpHeaders headers) {
        for (String value : headers.getAll(HttpHeaderNames.CONTENT_ENCODING)) {
            if (!value.strip().equalsIgnoreCase("identity")) {
                return true;
            }
        }
        return false;
    }

    /** Records the refusal on the request's record: the deciding entry as its rule, and the repository. */
    static void record(AuditRecord audit, Refuse r) {
        audit.denied(r.reason()).status(403).git(r.rule() == null ? "git" : r.rule().ruleName(), r.repository(),
                null, null);
    }

    /** The words of a refusal, one line: what was refused, why, and what the entry allows. */
    static String message(GitRule rule, String repository, String reason) {
        String what = repository == null ? "sallyport: refused a git request" : "sallyport: push to " + repository
                + " refused";
        String allows = rule == null ? (repository == null ? "" : "; no git entry of this host names the repository")
                : "; git entry " + rule.name() + " allows " + rule.pushText();
        return what + " (" + reason + ")" + allows;
    }

    /** The 403 a refused discovery or request gets: its message as text/plain, which git prints line by line. */
    static FullHttpResponse answer(ByteBufAllocator alloc, Refuse r) {
        String text = message(r.rule(), r.repository(), r.reason()) + "\n" + (r.detail() == null ? ""
                : "sallyport: " + r.detail() + "\n");
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.FORBIDDEN,
                alloc.buffer(body.length).writeBytes(body));
        response.headers().set(Responses.REASON_HEADER, r.reason())
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN + "; charset=utf-8")
                .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        return response;
    }
}
