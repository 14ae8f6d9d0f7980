package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.Reasons;
import dev.sallyport.policy.Rule;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Headers with which many backends replace the method or the URL of a request after it passed the proxy:
 * {@code X-HTTP-Method-Override}, {@code X-HTTP-Method}, {@code X-Method-Override} (Google APIs, Rails, Express's
 * method-override, ASP.NET) and {@code X-Original-URL}, {@code X-Rewrite-URL} (IIS, Symfony, some gateways). The
 * proxy does not strip them (clients rely on the method overrides) but decides on the effective request as well:
 * the request goes out only when the policy allows it under every method and every path it could be read as. A
 * denied reading is {@code 403 method_override_denied} or {@code url_override_denied}; a value that is no method
 * token or no origin-form path is {@code 400 invalid_override}.
 */
final class Overrides {

    static final String METHOD_DENIED = "method_override_denied";
    static final String URL_DENIED = "url_override_denied";
    static final String INVALID = "invalid_override";

    private static final List<String> METHOD_HEADERS = List.of("X-HTTP-Method-Override", "X-HTTP-Method",
            "X-Method-Override");
    private static final List<String> URL_HEADERS = List.of("X-Original-URL", "X-Rewrite-URL");

    private Overrides() {}

    /** The refusal, or null when there is no override or the policy allows every reading. */
    static RequestDecision.Refuse check(String method, HttpHeaders headers, Authority target, String originForm,
                                        String client, PolicyEngine engine) {
        List<String> methods = values(headers, METHOD_HEADERS).stream().map(m -> m.toUpperCase(Locale.ROOT)).toList();
        List<String> paths = values(headers, URL_HEADERS);
        if (methods.isEmpty() && paths.isEmpty()) {
            return null;
        }
        for (String m : methods) {
            if (!Rule.isMethodToken(m)) {
                return new RequestDecision.Refuse(400, INVALID, null);
            }
        }
        for (String p : paths) {
            if (!p.startsWith("/")) {
                return new RequestDecision.Refuse(400, INVALID, null);
            }
        }
        List<String> allMethods = new ArrayList<>(methods);
        allMethods.add(method);
        List<String> allPaths = new ArrayList<>(paths);
        allPaths.add(originForm);
        for (String m : allMethods) {
            for (String p : allPaths) {
                Decision d = engine.onRequest(target.host(), target.port(), m, p, client);
                if (d.reason().equals(Reasons.INVALID_PATH)) {
                    return new RequestDecision.Refuse(400, INVALID, d);
                }
                if (!d.permitsTraffic()) {
                    return new RequestDecision.Refuse(403, p.equals(originForm) ? METHOD_DENIED : URL_DENIED, d);
                }
            }
        }
        return null;
    }

    private static List<String> values(HttpHeaders headers, List<String> names) {
        List<String> out = new ArrayList<>();
        for (String name : names) {
            for (String v : headers.getAll(name)) {
                String t = v.strip();
                if (!t.isEmpty()) {
                    out.add(t);
                }
            }
        }
        return out;
    }
}
