package dev.sallyport.proxy.registry;

import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;

/**
 * Publish times as registries write them ({@code 2026-11-01T12:00:00.000Z}), read without the allocations of a
 * {@code DateTimeFormatter} (a large document has thousands); any other spelling goes through {@link Instant#parse}.
 */
final class Timestamps {

    private Timestamps() {}

    /** The instant, or null when the text is not an ISO-8601 instant. */
    static Instant parse(String s) {
        int n = s.length();
        if (n >= 20 && s.charAt(n - 1) == 'Z' && s.charAt(4) == '-' && s.charAt(7) == '-' && s.charAt(10) == 'T'
                && s.charAt(13) == ':' && s.charAt(16) == ':' && (n == 20 || s.charAt(19) == '.')) {
            int year = digits(s, 0, 4);
            int month = digits(s, 5, 7);
            int day = digits(s, 8, 10);
            int hour = digits(s, 11, 13);
            int minute = digits(s, 14, 16);
            int second = digits(s, 17, 19);
            int nanos = 0;
            if (n > 20) {
                int fraction = n - 1 - 20;
                if (fraction < 1 || fraction > 9) {
                    return slow(s);
                }
                nanos = digits(s, 20, n - 1);
                for (int i = fraction; i < 9; i++) {
                    nanos *= 10;
                }
            }
            if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59
                    || nanos < 0) {
                return slow(s);
            }
            try {
                long epochDay = LocalDate.of(year, month, day).toEpochDay();
                return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3600L + minute * 60L + second, nanos);
            } catch (java.time.DateTimeException e) {
                return null;
            }
        }
        return slow(s);
    }

    private static int digits(String s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1_000_000_000;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static Instant slow(String s) {
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
