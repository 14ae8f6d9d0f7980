package dev.sallyport.policy;

import java.util.Objects;

/**
 * What the policy decided for one CONNECT, request or dial.
 *
 * @param rule           nullable: the deciding rule's name
 * @param ruleLine       the deciding rule's line, 0 when no rule decided
 * @param reason         a {@link Reasons} code
 * @param tls            how an allowed CONNECT is handled (INTERCEPT when no rule decided)
 * @param normalizedPath nullable: the path (without query) that was matched, for onRequest
 */
public record Decision(Verdict verdict, String rule, int ruleLine, String reason, TlsMode tls,
                       String normalizedPath) {

    public Decision {
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(tls, "tls");
    }

    /** This decision recorded with {@code path} (itself when it already is). */
    public Decision withPath(String path) {
        return Objects.equals(path, normalizedPath) ? this
                : new Decision(verdict, rule, ruleLine, reason, tls, path);
    }

    /** True for ALLOW and WOULD_DENY: the traffic goes through. */
    public boolean permitsTraffic() {
        return verdict != Verdict.DENY;
    }
}
