package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.proxy.inject.UpstreamLeg;
import io.netty.handler.codec.http.HttpHeaderNames;

/**
 * The decision stage, the same for every front end: no {@code Connection} field that names the framing or
 * {@code Host} (stripping what it names would forward a body without its framing: a second request upstream), the
 * request's {@code Host} must name its target (for a request
 * in a tunnel, the CONNECT target), a WebSocket upgrade only inside a tunnel, then the policy decides on method,
 * host, port and normalized path, and on every method and path the override headers could make of it. Pure: no
 * I/O, so it is tested directly.
 */
final class RequestDecision {

    /** What the stage concluded. */
    sealed interface Result {}

    /** Refuse with {@code status}; {@code decision} is the policy's verdict when the policy made it (nullable). */
    record Refuse(int status, String reason, Decision decision) implements Result {}

    /** The policy allows it (or, in audit mode, would deny it and lets it through). */
    record Allow(Decision decision) implements Result {}

    /** A request whose {@code Connection} field names Content-Length, Transfer-Encoding or Host. */
    static final String CONNECTION_LISTS_PROTECTED = "connection_lists_protected_header";

    private RequestDecision() {}

    static Result decide(ExchangeRequest request, PolicyEngine engine) {
        if (HopHeaders.protectedListed(request.headers()) != null) {
            return new Refuse(400, CONNECTION_LISTS_PROTECTED, null);
        }
        Authority target = request.target();
        String host = request.headers().get(HttpHeaderNames.HOST);
        if (host == null) {
            return new Refuse(400, "missing_host", null);
        }
        try {
            int defaultPort = request.leg() == UpstreamLeg.TLS ? 443 : 80;
            if (!Authority.parse(host.strip(), defaultPort).equals(target)) {
                return new Refuse(403, "host_mismatch", null);
            }
        } catch (IllegalArgumentException e) {
            String reason = e.getMessage() == null ? "invalid_host" : e.getMessage();
            return new Refuse(reason.equals("userinfo_in_authority") ? 403 : 400, reason, null);
        }
        if (request.upgrade() == ExchangeRequest.Upgrade.WEBSOCKET && request.leg() != UpstreamLeg.TLS) {
            return new Refuse(400, "unsupported_upgrade", null);
        }
        String client = request.origin().identity().policy();
        Decision decision = engine.onRequest(target.host(), target.port(), request.method(), request.originForm(),
                client);
        if (!decision.permitsTraffic()) {
            return new Refuse(403, decision.reason(), decision);
        }
        Refuse override = Overrides.check(request.method(), request.headers(), target, request.originForm(), client,
                engine);
        return override != null ? override : new Allow(decision);
    }
}
