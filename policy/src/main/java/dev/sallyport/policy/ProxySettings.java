package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The {@code proxy} section. The admin token, when set, comes from {@code proxy.admin_token: {env: NAME}}
 * or {@code {file: PATH}} (at most one of the two); this record holds where to find it, never the token.
 *
 * @param adminTokenEnv  nullable: environment variable holding the admin token
 * @param adminTokenFile nullable: file holding the admin token, absolute
 * @param http2          {@code proxy.http2}: intercepted tunnels offer {@code h2} beside {@code http/1.1} in ALPN
 *                       (off by default for now)
 */
public record ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts,
                            String adminTokenEnv, Path adminTokenFile, boolean http2) {

    public static final ProxySettings DEFAULTS = new ProxySettings(new HostPort("127.0.0.1", 3128),
            new HostPort("127.0.0.1", 9901), Limits.DEFAULTS, Timeouts.DEFAULTS, null, null, true);

    /** The settings without HTTP/2. */
    public ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts, String adminTokenEnv,
                         Path adminTokenFile) {
        this(listen, admin, limits, timeouts, adminTokenEnv, adminTokenFile, false);
    }

    public ProxySettings {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(timeouts, "timeouts");
        if (adminTokenEnv != null && adminTokenFile != null) {
            throw new IllegalArgumentException("adminToken: both env and file (expected: one of them)");
        }
    }
}
