package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.GitReasons;
import dev.sallyport.policy.GitRule;
import dev.sallyport.policy.RefUpdate;
import dev.sallyport.proxy.git.CommandReader;
import dev.sallyport.proxy.git.PushReport;
import dev.sallyport.proxy.http.Responses;
import dev.sallyport.proxy.internal.AuditRecord;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The body half of the git stage for one push: the exchange holds its dial while this reads the ref updates at the
 * start of the body (the parts wait in the exchange, unsent). Once they are read, every update is decided by the
 * repository's entry: all allowed, the dial goes ahead and the held parts go first; one refused, nothing goes
 * upstream, the rest of the body is read and dropped, and the push is answered with a receive-pack report that
 * names each ref and its reason (so {@code git} shows it). An unreadable command list is refused the same way.
 */
final class GitPushGate {

    /** Where the gate is. */
    private enum Phase { READING, ALLOWED, DRAINING, ANSWERED }

    private final GitRule rule;
    private final String repository;
    private final AuditRecord audit;
    private final ByteBufAllocator alloc;
    private final CommandReader reader = new CommandReader();
    private final CompletableFuture<FullHttpResponse> verdict = new CompletableFuture<>();
    private Phase phase = Phase.READING;
    private FullHttpResponse answer;

    GitPushGate(GitRule rule, String repository, AuditRecord audit, ByteBufAllocator alloc) {
        this.rule = rule;
        this.repository = repository;
        this.audit = audit;
        this.alloc = alloc;
    }

    /** Completes with null (dial) or the answer to send (refused), once the whole body was read. */
    CompletableFuture<FullHttpResponse> verdict() {
        return verdict;
    }

    /** True while the body's parts are this gate's: read (and held by the exchange), or dropped. */
    boolean holding() {
        return phase == Phase.READING || phase == Phase.DRAINING;
    }

    /** True once refused: the parts that come are dropped until the last. */
    boolean draining() {
        return phase == Phase.DRAINING;
    }

    /** True once the push was refused (its answer waiting for the body's end, or given). */
    boolean refused() {
        return phase == Phase.DRAINING || phase == Phase.ANSWERED;
    }

    /** True while the command list is still being read: the exchange asks for the next part. */
    boolean reading() {
        return phase == Phase.READING;
    }

    /** A part of the body (its bytes are read, not consumed); {@code last}: the body ended with it. */
    void offer(ByteBuf part, boolean last) {
        CommandReader.Result r = reader.offer(bytes(part), 0, part.readableBytes());
        if (r instanceof CommandReader.NeedMore && last) {
            r = reader.end();
        }
        switch (r) {
            case CommandReader.NeedMore more -> { }
            case CommandReader.Commands c -> decide(c);
            case CommandReader.Unreadable u -> refuse(u.tooLong() ? GitReasons.COMMANDS_TOO_LONG
                    : GitReasons.COMMANDS_UNREADABLE, u.why(), List.of(), Set.of());
        }
        if (last) {
            bodyEnded();
        }
    }

    /** The last part of the body went by: a refusal is answered now. */
    void bodyEnded() {
        if (phase == Phase.DRAINING) {
            phase = Phase.ANSWERED;
            verdict.complete(answer);
        }
    }

    private static byte[] bytes(ByteBuf part) {
        byte[] b = new byte[part.readableBytes()];
        part.getBytes(part.readerIndex(), b);
        return b;
    }

    private void decide(CommandReader.Commands c) {
        Map<String, String> refused = new LinkedHashMap<>();
        for (RefUpdate u : c.updates()) {
            String reason = GitRule.refusal(rule, u);
            if (reason != null) {
                refused.putIfAbsent(u.ref(), reason);
            }
        }
        List<String> refs = c.updates().stream().map(RefUpdate::ref).toList();
        if (refused.isEmpty()) {
            audit.git(null, repository, refs.isEmpty() ? null : refs, null);
            phase = Phase.ALLOWED;
            verdict.complete(null);
            return;
        }
        String first = refused.values().iterator().next();
        audit.git(rule.ruleName(), repository, refs, List.copyOf(refused.keySet()));
        List<String> lines = new ArrayList<>();
        lines.add(GitStage.message(rule, repository, first));
        refused.forEach((ref, reason) -> lines.add("sallyport:   " + ref + ": " + reason));
        lines.add("sallyport: nothing of this push was sent upstream");
        answer(first, PushReport.body(c.capabilities(), lines, c.updates(), refused, GitReasons.PUSH_INCOMPLETE),
                c.capabilities());
    }

    private void refuse(String reason, String why, List<RefUpdate> updates, Set<String> capabilities) {
        audit.git(rule.ruleName(), repository, null, null);
        List<String> lines = List.of(GitStage.message(rule, repository, reason), "sallyport: " + why);
        byte[] body = PushReport.body(capabilities, lines, updates, Map.of(), reason);
        if (body.length == 0) {     // no capabilities read: plain text, which git shows as the RPC's failure
            body = (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
        }
        answer(reason, body, capabilities);
    }

    private void answer(String reason, byte[] body, Set<String> capabilities) {
        audit.denied(reason);
        boolean report = capabilities.contains("report-status") || capabilities.contains("report-status-v2");
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                report ? HttpResponseStatus.OK : HttpResponseStatus.FORBIDDEN,
                alloc.buffer(body.length).writeBytes(body));
        response.headers().set(Responses.REASON_HEADER, reason)
                .set(HttpHeaderNames.CONTENT_TYPE, report ? PushReport.CONTENT_TYPE : "text/plain; charset=utf-8")
                .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        answer = response;
        phase = Phase.DRAINING;
    }

    /** Gives back an answer never sent (the client left first). */
    void release() {
        if (answer != null && phase == Phase.DRAINING) {
            answer.release();
            phase = Phase.ANSWERED;
        }
    }
}
