package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * The {@code proxy} section. The admin token, when set, comes from {@code proxy.admin_token: {env: NAME}}
 * or {@code {file: PATH}} (at most one of the two); this record holds where to find it, never the token.
 *
 * @param adminTokenEnv  nullable: environment variable holding the admin token
 * @param adminTokenFile nullable: file holding the admin token, absolute
 * @param http2          {@code proxy.http2}: intercepted tunnels offer {@code h2} beside {@code http/1.1} in ALPN
 *                       (on by default)
 * @param transparent    nullable: {@code proxy.transparent}, where connections redirected to the proxy by the host's
 *                       own nftables (DNAT, REDIRECT) are accepted; their original destination is read from the
 *                       kernel's connection tracking
 * @param dns            nullable: {@code proxy.dns}, where the DNS stub answers (UDP and TCP)
 * @param metricsIdentities {@code proxy.metrics_identities}: the identities the per-identity metrics name; every
 *                       other registered sandbox counts as {@code other} (a label value per job would grow without
 *                       bound)
 */
public record ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts,
                            String adminTokenEnv, Path adminTokenFile, boolean http2,
                            HostPort transparent, HostPort dns, List<String> metricsIdentities) {

    /** The most names {@code proxy.metrics_identities} may list. */
    public static final int MAX_METRICS_IDENTITIES = 100;

    public static final ProxySettings DEFAULTS = new ProxySettings(new HostPort("127.0.0.1", 3128),
            new HostPort("127.0.0.1", 9901), Limits.DEFAULTS, Timeouts.DEFAULTS, null, null, true, null, null);

    /** The settings without per-identity metric names. */
    public ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts, String adminTokenEnv,
                         Path adminTokenFile, boolean http2, HostPort transparent, HostPort dns) {
        this(listen, admin, limits, timeouts, adminTokenEnv, adminTokenFile, http2, transparent, dns, List.of());
    }

    /** The settings without a transparent listener or DNS stub. */
    public ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts, String adminTokenEnv,
                         Path adminTokenFile, boolean http2) {
        this(listen, admin, limits, timeouts, adminTokenEnv, adminTokenFile, http2, null, null);
    }

    /** The settings without HTTP/2. */
    public ProxySettings(HostPort listen, HostPort admin, Limits limits, Timeouts timeouts, String adminTokenEnv,
                         Path adminTokenFile) {
        this(listen, admin, limits, timeouts, adminTokenEnv, adminTokenFile, false, null, null);
    }

    public ProxySettings {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(timeouts, "timeouts");
        metricsIdentities = List.copyOf(metricsIdentities);
        if (adminTokenEnv != null && adminTokenFile != null) {
            throw new IllegalArgumentException("adminToken: both env and file (expected: one of them)");
        }
    }
}
