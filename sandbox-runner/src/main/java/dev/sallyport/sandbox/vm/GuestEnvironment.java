package dev.sallyport.sandbox.vm;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.SequencedMap;

/**
 * The guest's environment: the same variables the process backend sets, pointing at the proxy on the bridge
 * gateway and at the trust bundle mounted at {@link #GUEST_BUNDLE}. Proxy variables are usability hints only: the
 * network enforces the route, so a tool that ignores them simply fails.
 */
public final class GuestEnvironment {

    /** Where the trust bundle (proxy CA + public roots) appears in the guest. */
    public static final String GUEST_BUNDLE = "/etc/sallyport/trust-bundle.pem";
    /** Where the PKCS12 trust store for JVMs appears in the guest. */
    public static final String GUEST_TRUSTSTORE = "/etc/sallyport/truststore.p12";
    /**
     * The password of that trust store; it protects nothing secret (public certificates only). The same as the
     * process backend's, so one set of trust files serves both backends.
     */
    public static final String TRUSTSTORE_PASSWORD = "sallyport";
    /** Distribution bundle paths the trust bundle is also mounted over (Debian/Ubuntu/Alpine, RHEL/Fedora). */
    public static final List<String> DISTRO_BUNDLES = List.of(
            "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt");
    /** Where the workspace is mounted and the workload starts. */
    public static final String WORKSPACE = "/workspace";

    private GuestEnvironment() {
    }

    /** The environment for {@code spec}, in a stable order; secrets (placeholders) come last, by name. */
    public static SequencedMap<String, String> of(NerdctlSpec spec) {
        String proxy = spec.network().proxyUrl();
        String gateway = spec.network().gateway();
        int port = spec.network().proxyPort();
        SequencedMap<String, String> env = new LinkedHashMap<>();
        env.put("HTTP_PROXY", proxy);
        env.put("HTTPS_PROXY", proxy);
        env.put("http_proxy", proxy);
        env.put("https_proxy", proxy);
        env.put("ALL_PROXY", proxy);
        env.put("all_proxy", proxy);
        env.put("GRPC_PROXY", proxy);
        env.put("grpc_proxy", proxy);
        env.put("BUNDLE_HTTP_PROXY", proxy);
        env.put("BUNDLE_HTTPS_PROXY", proxy);
        env.put("NO_PROXY", "localhost,127.0.0.1,::1");
        env.put("no_proxy", "localhost,127.0.0.1,::1");
        env.put("npm_config_noproxy", "localhost,127.0.0.1,::1");
        env.put("NODE_USE_ENV_PROXY", "1");
        env.put("npm_config_proxy", proxy);
        env.put("npm_config_https_proxy", proxy);
        env.put("npm_config_cafile", GUEST_BUNDLE);
        env.put("YARN_HTTP_PROXY", proxy);
        env.put("YARN_HTTPS_PROXY", proxy);
        env.put("YARN_HTTPS_CA_FILE_PATH", GUEST_BUNDLE);
        env.put("PIP_PROXY", proxy);
        env.put("PIP_CERT", GUEST_BUNDLE);
        env.put("SSL_CERT_FILE", GUEST_BUNDLE);
        env.put("NODE_EXTRA_CA_CERTS", GUEST_BUNDLE);
        env.put("REQUESTS_CA_BUNDLE", GUEST_BUNDLE);
        env.put("CURL_CA_BUNDLE", GUEST_BUNDLE);
        env.put("GIT_SSL_CAINFO", GUEST_BUNDLE);
        env.put("AWS_CA_BUNDLE", GUEST_BUNDLE);
        env.put("CARGO_HTTP_CAINFO", GUEST_BUNDLE);
        env.put("DENO_CERT", GUEST_BUNDLE);
        env.put("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", GUEST_BUNDLE);
        env.put("JAVA_TOOL_OPTIONS", javaOptions(spec, gateway, port));
        env.put("HOME", "/tmp");
        for (var secret : spec.secrets().entrySet()) {
            if (env.containsKey(secret.getKey())) {
                throw new IllegalArgumentException("secrets: '" + secret.getKey()
                        + "' would replace a variable the sandbox needs (expected: another name)");
            }
            env.put(secret.getKey(), secret.getValue());
        }
        return env;
    }

    private static String javaOptions(NerdctlSpec spec, String gateway, int port) {
        StringBuilder options = new StringBuilder()
                .append("-Dhttp.proxyHost=").append(gateway).append(" -Dhttp.proxyPort=").append(port)
                .append(" -Dhttps.proxyHost=").append(gateway).append(" -Dhttps.proxyPort=").append(port)
                .append(" -Dhttp.nonProxyHosts=localhost|127.*|[::1]");
        if (spec.javaTrustStore() != null) {
            options.append(" -Djavax.net.ssl.trustStore=").append(GUEST_TRUSTSTORE)
                    .append(" -Djavax.net.ssl.trustStoreType=PKCS12")
                    .append(" -Djavax.net.ssl.trustStorePassword=").append(TRUSTSTORE_PASSWORD);
        }
        return options.toString();
    }
}
