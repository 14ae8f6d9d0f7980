package dev.sallyport.proxy.audit;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import java.time.Instant;
import java.util.List;

/** Events as the data path emits them, for tests. */
final class AuditEvents {

    static final Instant TS = Instant.parse("2026-11-30T01:02:03.456789Z");

    private AuditEvents() {}

    static AuditFields request(String id, String path) {
        return new AuditFields(id, "127.0.0.1:50000", null, "api.example.com", 443, "93.184.216.34", "GET", path,
                200, "allow", "github-api", "allowed_by_rule", "intercepted", "api.example.com", 120L, 4096L, 35L,
                List.of("GITHUB_TOKEN"));
    }

    static ProxyEvent.ExchangeCompleted exchange(String id, String path) {
        return new ProxyEvent.ExchangeCompleted(TS, request(id, path));
    }

    static ProxyEvent.Decided denied(String id) {
        return new ProxyEvent.Decided(TS, "connect", new AuditFields(id, "127.0.0.1:50001", null, "evil.example",
                443, null, "CONNECT", null, 403, "deny", null, "no_matching_rule", null, null, null, null, null,
                null));
    }
}
