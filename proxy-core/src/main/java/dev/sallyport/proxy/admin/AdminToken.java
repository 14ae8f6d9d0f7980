package dev.sallyport.proxy.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The bearer token that guards {@code POST /reload}. Only a SHA-256 digest is kept, and a presented token is
 * hashed too before the constant-time comparison, so neither the content nor the length of the real token
 * leaks through timing. Never printed.
 */
final class AdminToken {

    private final byte[] digest;

    AdminToken(String token) {
        if (token.isBlank()) {
            throw new IllegalArgumentException("admin token: empty (expected: a non-blank secret)");
        }
        this.digest = sha256(token.strip());
    }

    /** Whether an {@code Authorization} header value carries this token as {@code Bearer <token>}. */
    boolean matches(String authorization) {
        if (authorization == null || authorization.length() < 7
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(digest, sha256(authorization.substring(7).strip()));
    }

    @Override
    public String toString() {
        return "AdminToken[hidden]";
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: every JDK has it)", e);
        }
    }
}
