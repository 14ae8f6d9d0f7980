package dev.sallyport.proxy.http;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.PolicyEngine;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.List;
import java.util.Locale;

/**
 * Decides one request head: well-formed, targets agree (absolute-form vs Host, or Host vs CONNECT target),
 * no h2c, then the policy decides in full. Pure: no I/O, so it is tested directly.
 */
final class RequestGate {

    /** A request whose {@code Connection} header names Content-Length, Transfer-Encoding or Host. */
    static final String CONNECTION_LISTS_PROTECTED = "connection_lists_protected_header";

    private RequestGate() {}

    static GateResult evaluate(HttpRequest request, TunnelTarget tunnel, String client, PolicyEngine engine) {
        DecoderResult result = request.decoderResult();
        if (result.isFailure()) {
            Throwable cause = result.cause();
            if (cause instanceof TooLongHttpLineException) {
                return new GateResult.Refuse(414, "request_line_too_long", null);
            }
            if (cause instanceof TooLongHttpHeaderException) {
                return new GateResult.Refuse(431, "headers_too_large", null);
            }
            return new GateResult.Refuse(400, "malformed_request", null);
        }
        if (request.protocolVersion() != HttpVersion.HTTP_1_1 && request.protocolVersion() != HttpVersion.HTTP_1_0) {
            return new GateResult.Refuse(505, "unsupported_http_version", null);
        }
        if (HopHeaders.protectedListed(request.headers()) != null) {
            return new GateResult.Refuse(400, CONNECTION_LISTS_PROTECTED, null);
        }
        boolean websocket = false;
        List<String> upgrades = request.headers().getAll(HttpHeaderNames.UPGRADE);
        if (request.headers().contains("HTTP2-Settings")) {
            return new GateResult.Refuse(400, "h2c_refused", null);
        }
        if (!upgrades.isEmpty()) {
            String upgrade = String.join(",", upgrades).strip().toLowerCase(Locale.ROOT);
            if (upgrade.contains("h2c")) {
                return new GateResult.Refuse(400, "h2c_refused", null);
            }
            if (!upgrade.equals("websocket") || tunnel == null) {
                return new GateResult.Refuse(400, "unsupported_upgrade", null);
            }
            websocket = true;
        }
        String uri = request.uri();
        if (uri.indexOf('#') >= 0) {
            return new GateResult.Refuse(400, "malformed_request_target", null);
        }
        Authority target;
        String originForm;
        try {
            if (tunnel == null) {
                if (!uri.regionMatches(true, 0, "http://", 0, 7)) {
                    return new GateResult.Refuse(400, uri.regionMatches(true, 0, "https://", 0, 8)
                            ? "https_requires_connect" : "absolute_form_required", null);
                }
                int slash = firstOf(uri, 7);
                target = Authority.parse(uri.substring(7, slash), 80);
                originForm = slash == uri.length() ? "/" : uri.substring(slash);
            } else {
                target = new Authority(tunnel.host(), tunnel.port());
                if (uri.startsWith("/")) {
                    originForm = uri;
                } else if (uri.regionMatches(true, 0, "https://", 0, 8)) {
                    int slash = firstOf(uri, 8);
                    if (!Authority.parse(uri.substring(8, slash), 443).equals(target)) {
                        return new GateResult.Refuse(403, "host_mismatch", null, target);
                    }
                    originForm = slash == uri.length() ? "/" : uri.substring(slash);
                } else {
                    return new GateResult.Refuse(400, "malformed_request_target", null);
                }
            }
            if (originForm.startsWith("?")) {
                originForm = "/" + originForm;
            }
            String host = request.headers().get(HttpHeaderNames.HOST);
            if (host == null) {
                return new GateResult.Refuse(400, "missing_host", null);
            }
            int defaultPort = tunnel == null ? 80 : 443;
            if (!Authority.parse(host.strip(), defaultPort).equals(target)) {
                return new GateResult.Refuse(403, "host_mismatch", null, target);
            }
        } catch (IllegalArgumentException e) {
            String reason = e.getMessage() == null ? "invalid_host" : e.getMessage();
            return new GateResult.Refuse(reason.equals("userinfo_in_authority") ? 403 : 400, reason, null);
        }
        Decision decision = engine.onRequest(target.host(), target.port(), request.method().name(), originForm, client);
        if (!decision.permitsTraffic()) {
            return new GateResult.Refuse(403, decision.reason(), decision, target);
        }
        GateResult.Refuse override = Overrides.check(request, target, originForm, client, engine);
        if (override != null) {
            return override;
        }
        return new GateResult.Forward(target, tunnel != null, originForm, decision, websocket);
    }

    private static int firstOf(String uri, int from) {
        for (int i = from; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '/' || c == '?') {
                return i;
            }
        }
        return uri.length();
    }
}
