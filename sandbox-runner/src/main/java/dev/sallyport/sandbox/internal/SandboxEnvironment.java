package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedMap;
import java.util.TreeMap;

/**
 * The one list of variables that sends a sandboxed command's traffic to the proxy and makes it trust the proxy's
 * CA, for both backends: the process sandbox (proxy on {@code 127.0.0.1} inside) and the VM guest (proxy on the
 * bridge gateway). What differs between them is only the base each brings (the process sandbox starts from an
 * empty environment, the guest from its image's) and where the proxy and the trust files are.
 *
 * <p>Order: the backend's base, the host variables passed through by name, the routing variables
 * ({@link #PROXY_URL}, {@link #NO_PROXY}, {@code NODE_USE_ENV_PROXY}, {@link #CA_BUNDLE}, {@code JAVA_TOOL_OPTIONS}),
 * then the secrets' placeholders by name. A passed-through variable may replace the base, never a routing variable
 * (except {@link #MERGED}); a secret may replace nothing.
 */
public final class SandboxEnvironment {
    /** The process sandbox's PATH (the guest keeps its image's). */
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** Variables set to the proxy's URL: curl, wget, git, Python, Go, Node, npm, yarn, pip, gRPC, bundler. */
    public static final List<String> PROXY_URL = List.of("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
            "https_proxy", "all_proxy", "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY",
            "YARN_HTTPS_PROXY", "PIP_PROXY", "GRPC_PROXY", "grpc_proxy", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY");
    /** Variables naming what does not go through the proxy: the sandbox's own loopback. */
    public static final List<String> NO_PROXY = List.of("NO_PROXY", "no_proxy", "npm_config_noproxy");
    /** Variables naming the trust bundle (the proxy CA and the system roots, PEM). */
    public static final List<String> CA_BUNDLE = List.of("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO", "CURL_CA_BUNDLE", "npm_config_cafile",
            "YARN_HTTPS_CA_FILE_PATH", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT",
            "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH");
    /**
     * The routing variable a host value may be passed into: the host's Java options come first, the sandbox's after
     * them, and for a JVM the later of two equal {@code -D} options wins, so the proxy and trust store stay the
     * sandbox's.
     */
    public static final String MERGED = "JAVA_TOOL_OPTIONS";
    static final String LOOPBACK_NAMES = "localhost,127.0.0.1,::1";
    /** {@link #LOOPBACK_NAMES} as Java's {@code http.nonProxyHosts} spells it (the JDK's own default list). */
    static final String JAVA_LOOPBACK_NAMES = "localhost|127.*|[::1]";

    private SandboxEnvironment() {
    }

    /**
     * Where the sandbox finds the proxy and the trust files ({@link TrustFiles}), as paths inside it.
     *
     * @param proxyHost  the proxy's address as the command dials it (an IP literal)
     * @param proxyPort  its port
     * @param bundle     the PEM trust bundle
     * @param trustStore the PKCS12 trust store for Java, if the sandbox has one
     */
    public record Routing(String proxyHost, int proxyPort, String bundle, Optional<String> trustStore) {
        public Routing {
            if (proxyPort < 1 || proxyPort > 65535) {
                throw new IllegalArgumentException("proxyPort: " + proxyPort + " (expected: 1..65535)");
            }
        }

        /** {@code http://HOST:PORT}. */
        public String proxyUrl() {
            return "http://" + proxyHost + ":" + proxyPort;
        }
    }

    /**
     * The whole environment. {@code base} is the backend's own (PATH, HOME, ...); {@code passEnv} names the host
     * variables to pass through (those {@code hostEnv} lacks are skipped); {@code secrets} maps name to placeholder.
     *
     * @throws IllegalArgumentException one line, when {@code passEnv} names a routing variable or a secret would
     *                                  replace any variable the sandbox sets
     */
    public static SequencedMap<String, String> build(Map<String, String> base, List<String> passEnv,
                                                     Map<String, String> hostEnv, Routing routing,
                                                     Map<String, String> secrets) {
        SequencedMap<String, String> ours = routing(routing);
        SequencedMap<String, String> env = new LinkedHashMap<>(base);
        for (String name : passEnv) {
            if (name.equals(MERGED)) {
                Optional.ofNullable(hostEnv.get(name)).filter(v -> !v.isBlank())
                        .ifPresent(v -> ours.put(name, v.strip() + " " + ours.get(name)));
                continue;
            }
            if (ours.containsKey(name)) {
                throw new IllegalArgumentException("env " + name + ": set by the sandbox to route traffic through "
                        + "the proxy (expected: a variable the sandbox does not set)");
            }
            String value = hostEnv.get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        env.putAll(ours);
        for (Map.Entry<String, String> secret : new TreeMap<>(secrets).entrySet()) {
            if (env.containsKey(secret.getKey())) {
                throw new IllegalArgumentException("secrets: '" + secret.getKey()
                        + "' would replace a variable the sandbox needs (expected: another name)");
            }
            env.put(secret.getKey(), secret.getValue());
        }
        return Collections.unmodifiableSequencedMap(env);
    }

    /**
     * The process sandbox's environment: {@code path} ({@link HomeTools}), HOME (the empty tmpfs over the host home),
     * TMPDIR, TERM and LANG (the host's, else {@code dumb} and {@code C.UTF-8}), the {@code passEnv} variables the
     * host has, routing to {@code 127.0.0.1:}{@link SandboxSpec#insidePort()} with the trust files at {@code bundle}
     * and {@code p12}.
     */
    public static SequencedMap<String, String> forProcess(SandboxSpec spec, String path, String bundle, String p12)
            throws SandboxException {
        Map<String, String> base = new LinkedHashMap<>();
        base.put("PATH", path);
        base.put("HOME", spec.hostHome().toString());
        base.put("TMPDIR", "/tmp");
        base.put("TERM", spec.hostEnv().getOrDefault("TERM", "dumb"));
        base.put("LANG", spec.hostEnv().getOrDefault("LANG", "C.UTF-8"));
        try {
            Routing routing = new Routing("127.0.0.1", spec.insidePort(), bundle, Optional.of(p12));
            return build(base, spec.passEnv(), spec.hostEnv(), routing, spec.placeholders());
        } catch (IllegalArgumentException e) {
            throw new SandboxException(e.getMessage(), e);
        }
    }

    /** The routing variables alone, in their fixed order. */
    public static SequencedMap<String, String> routing(Routing routing) {
        SequencedMap<String, String> env = new LinkedHashMap<>();
        PROXY_URL.forEach(name -> env.put(name, routing.proxyUrl()));
        NO_PROXY.forEach(name -> env.put(name, LOOPBACK_NAMES));
        env.put("NODE_USE_ENV_PROXY", "1");
        CA_BUNDLE.forEach(name -> env.put(name, routing.bundle()));
        env.put("JAVA_TOOL_OPTIONS", javaOptions(routing));
        return env;
    }

    private static String javaOptions(Routing routing) {
        StringBuilder options = new StringBuilder()
                .append("-Dhttp.proxyHost=").append(routing.proxyHost())
                .append(" -Dhttp.proxyPort=").append(routing.proxyPort())
                .append(" -Dhttps.proxyHost=").append(routing.proxyHost())
                .append(" -Dhttps.proxyPort=").append(routing.proxyPort())
                .append(" -Dhttp.nonProxyHosts=").append(JAVA_LOOPBACK_NAMES);
        routing.trustStore().ifPresent(store -> options.append(" -Djavax.net.ssl.trustStore=").append(store)
                .append(" -Djavax.net.ssl.trustStoreType=PKCS12")
                .append(" -Djavax.net.ssl.trustStorePassword=").append(TrustFiles.P12_PASSWORD));
        return options.toString();
    }
}
