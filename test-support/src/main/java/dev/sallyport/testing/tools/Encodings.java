package dev.sallyport.testing.tools;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** The small encodings the fixtures share: JSON string literals and message digests. */
final class Encodings {

    private Encodings() {}

    /** {@code algorithm}'s digest of {@code bytes} ({@code SHA-256}, {@code SHA-512}, {@code SHA-1}). */
    static byte[] digest(String algorithm, byte[] bytes) {
        try {
            return MessageDigest.getInstance(algorithm).digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " is missing from this JDK", e);
        }
    }

    /** A JSON string literal (quotes, backslashes and control characters escaped). */
    static String json(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
