package dev.sallyport.proxy.http;

import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.List;
import java.util.Locale;

/**
 * Reads one HTTP/1.1 request head into an {@link ExchangeRequest}: what only HTTP/1.1 has to say (decoder
 * failures, the version, {@code h2c}, the request-target forms: absolute {@code http://} for plain requests,
 * origin-form or an {@code https://} URL naming the tunnel's target inside a tunnel, an {@code http://} one inside a
 * transparent connection speaking plain HTTP, whose requests go upstream in cleartext). Everything else is the core's.
 * Pure: no I/O.
 */
final class Http1Requests {

    /** What reading the head gave. */
    sealed interface Parsed {}

    record Read(ExchangeRequest request) implements Parsed {}

    /** Refuse with {@code status}; {@code target} is the destination the request named, when it could be read. */
    record Refuse(int status, String reason, Authority target) implements Parsed {
        Refuse(int status, String reason) {
            this(status, reason, null);
        }
    }

    private Http1Requests() {}

    static Parsed read(HttpRequest request, TunnelTarget tunnel, ExchangeRequest.Origin origin) {
        boolean plain = tunnel != null && tunnel.carries() == TunnelTarget.Carries.PLAIN_HTTP;
        DecoderResult result = request.decoderResult();
        if (result.isFailure()) {
            Throwable cause = result.cause();
            if (cause instanceof TooLongHttpLineException) {
                return new Refuse(414, "request_line_too_long");
            }
            if (cause instanceof TooLongHttpHeaderException) {
                return new Refuse(431, "headers_too_large");
            }
            return new Refuse(400, "malformed_request");
        }
        if (!request.protocolVersion().equals(HttpVersion.HTTP_1_1)
                && !request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            return new Refuse(505, "unsupported_http_version");
        }
        ExchangeRequest.Upgrade upgrade = ExchangeRequest.Upgrade.NONE;
        List<String> upgrades = request.headers().getAll(HttpHeaderNames.UPGRADE);
        if (request.headers().contains("HTTP2-Settings")) {
            return new Refuse(400, "h2c_refused");
        }
        if (!upgrades.isEmpty()) {
            String value = String.join(",", upgrades).strip().toLowerCase(Locale.ROOT);
            if (value.contains("h2c")) {
                return new Refuse(400, "h2c_refused");
            }
            if (!value.equals("websocket") || tunnel == null) {
                return new Refuse(400, "unsupported_upgrade");
            }
            upgrade = ExchangeRequest.Upgrade.WEBSOCKET;
        }
        String uri = request.uri();
        if (uri.indexOf('#') >= 0) {
            return new Refuse(400, "malformed_request_target");
        }
        Authority target;
        String originForm;
        try {
            if (tunnel == null) {
                if (!uri.regionMatches(true, 0, "http://", 0, 7)) {
                    return new Refuse(400, uri.regionMatches(true, 0, "https://", 0, 8)
                            ? "https_requires_connect" : "absolute_form_required");
                }
                int slash = firstOf(uri, 7);
                target = Authority.parse(uri.substring(7, slash), 80);
                originForm = slash == uri.length() ? "/" : uri.substring(slash);
            } else {
                target = new Authority(tunnel.host(), tunnel.port());
                String scheme = plain ? "http://" : "https://";
                if (uri.startsWith("/")) {
                    originForm = uri;
                } else if (uri.regionMatches(true, 0, scheme, 0, scheme.length())) {
                    int slash = firstOf(uri, scheme.length());
                    if (!Authority.parse(uri.substring(scheme.length(), slash), plain ? 80 : 443).equals(target)) {
                        return new Refuse(403, "host_mismatch", target);
                    }
                    originForm = slash == uri.length() ? "/" : uri.substring(slash);
                } else {
                    return new Refuse(400, "malformed_request_target");
                }
            }
        } catch (IllegalArgumentException e) {
            String reason = e.getMessage() == null ? "invalid_host" : e.getMessage();
            return new Refuse(reason.equals("userinfo_in_authority") ? 403 : 400, reason);
        }
        if (originForm.startsWith("?")) {
            originForm = "/" + originForm;
        }
        return new Read(new ExchangeRequest(request.method().name(), target, originForm, request.headers(),
                ExchangeRequest.BodyShape.of(request), tunnel == null || plain ? UpstreamLeg.CLEARTEXT : UpstreamLeg.TLS,
                upgrade, origin));
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
