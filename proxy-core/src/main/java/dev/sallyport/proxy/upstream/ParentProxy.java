package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.UpstreamProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Base64;
import java.util.Map;

/**
 * The parent proxy of {@code upstream.proxy} as the connector uses it: which destinations go through it, where it
 * is, and the {@code Proxy-Authorization} value read once at start from the credentials' file or environment
 * variable (never from the policy; {@link #toString} never shows it).
 */
public final class ParentProxy {

    private final UpstreamProxy settings;
    private final String authorization;     // null without credentials

    private ParentProxy(UpstreamProxy settings, String authorization) {
        this.settings = settings;
        this.authorization = authorization;
    }

    /**
     * Reads the credentials of {@code settings} ({@code user:password}, a final newline dropped); throws
     * IllegalArgumentException with one line naming the key when they cannot be read or are not of that shape.
     */
    public static ParentProxy of(UpstreamProxy settings, Map<String, String> environment) {
        SecretSource source = settings.credentials();
        if (source == null) {
            return new ParentProxy(settings, null);
        }
        String where;
        String value;
        switch (source) {
            case SecretSource.Env env -> {
                where = "upstream.proxy.credentials.env: " + env.variable();
                value = environment.get(env.variable());
                if (value == null || value.isEmpty()) {
                    throw new IllegalArgumentException(where + " is unset or empty (expected: user:password)");
                }
            }
            case SecretSource.File file -> {
                where = "upstream.proxy.credentials.file: " + file.path();
                try {
                    value = Files.readString(file.path(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new IllegalArgumentException(where + ": cannot be read (" + e.getClass().getSimpleName()
                            + ") (expected: a readable file holding user:password)", e);
                }
            }
        }
        String credentials = value.endsWith("\r\n") ? value.substring(0, value.length() - 2)
                : value.endsWith("\n") ? value.substring(0, value.length() - 1) : value;
        if (credentials.indexOf(':') <= 0 || credentials.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException(where + " does not hold one line user:password (expected: a user"
                    + " name, a colon, the password; no control characters)");
        }
        return new ParentProxy(settings, "Basic " + Base64.getEncoder().encodeToString(
                credentials.getBytes(StandardCharsets.UTF_8)));
    }

    /** True when the connection to {@code dest} goes through the parent ({@code no_proxy} does not name it). */
    boolean carries(Destination dest) {
        return !settings.direct(dest.host());
    }

    HostPort address() {
        return settings.address();
    }

    /** The {@code Proxy-Authorization} value, or null when the policy names no credentials. */
    String authorization() {
        return authorization;
    }

    @Override
    public String toString() {
        return "ParentProxy[" + settings.address() + (authorization == null ? "" : ", with credentials") + "]";
    }
}
