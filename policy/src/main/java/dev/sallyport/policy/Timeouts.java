package dev.sallyport.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code proxy.timeouts}, written as {@code 250ms}, {@code 30s}, {@code 5m} or {@code 1h}.
 *
 * @param connect         TCP connect to the upstream (default 10s)
 * @param tls             a TLS handshake, either side (default 10s)
 * @param responseHeaders from request sent to response headers; slow LLM APIs need minutes (default 300s)
 * @param idle            no bytes either way on a connection or tunnel (default 300s)
 * @param shutdownGrace   how long shutdown drains open exchanges; may be zero (default 10s)
 */
public record Timeouts(Duration connect, Duration tls, Duration responseHeaders, Duration idle,
                       Duration shutdownGrace) {

    public static final Timeouts DEFAULTS = new Timeouts(Duration.ofSeconds(10), Duration.ofSeconds(10),
            Duration.ofSeconds(300), Duration.ofSeconds(300), Duration.ofSeconds(10));

    public Timeouts {
        positive("connect", connect);
        positive("tls", tls);
        positive("responseHeaders", responseHeaders);
        positive("idle", idle);
        Objects.requireNonNull(shutdownGrace, "shutdownGrace");
        if (shutdownGrace.isNegative()) {
            throw new IllegalArgumentException("shutdownGrace: " + shutdownGrace + " (expected: >= 0)");
        }
    }

    private static void positive(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
        }
    }

    /**
     * Parses {@code <digits><unit>} with unit {@code ms}, {@code s}, {@code m} or {@code h}; throws
     * IllegalArgumentException with the reason.
     */
    public static Duration parseDuration(String s) {
        Objects.requireNonNull(s, "duration");
        int i = 0;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        String digits = s.substring(0, i);
        String unit = s.substring(i);
        if (digits.isEmpty() || digits.length() > 9) {
            throw new IllegalArgumentException("'" + HostNames.printable(s) + "' is not a valid duration");
        }
        long n = Long.parseLong(digits);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> throw new IllegalArgumentException("'" + HostNames.printable(s)
                    + "' is not a valid duration");
        };
    }
}
