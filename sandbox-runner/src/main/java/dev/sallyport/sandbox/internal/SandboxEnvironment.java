package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The exact environment of the sandboxed command: proxy variables in both cases and the tool-specific ones,
 * the trust bundle under every name clients look for, Java's proxy and trust store through
 * {@code JAVA_TOOL_OPTIONS}, secret placeholders, PATH/HOME/TERM/LANG, and host variables passed by name.
 * Nothing else from the host.
 */
public final class SandboxEnvironment {
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private SandboxEnvironment() {
    }

    public static Map<String, String> build(SandboxSpec spec, String bundlePath, String p12Path)
            throws SandboxException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", DEFAULT_PATH);
        env.put("HOME", spec.hostHome().toString());
        env.put("TMPDIR", "/tmp");
        env.put("TERM", spec.hostEnv().getOrDefault("TERM", "dumb"));
        env.put("LANG", spec.hostEnv().getOrDefault("LANG", "C.UTF-8"));
        for (String name : spec.passEnv()) {
            String value = spec.hostEnv().get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        Map<String, String> ours = routing(spec.insidePort(), bundlePath, p12Path);
        for (String name : ours.keySet()) {
            if (spec.passEnv().contains(name) || spec.placeholders().containsKey(name)) {
                throw new SandboxException("env " + name + ": set by the sandbox to route traffic through the proxy "
                        + "(expected: a variable the sandbox does not set)");
            }
        }
        env.putAll(ours);
        for (Map.Entry<String, String> secret : spec.placeholders().entrySet()) {
            env.put(secret.getKey(), secret.getValue());
        }
        return env;
    }

    static Map<String, String> routing(int port, String bundle, String p12) {
        String url = "http://127.0.0.1:" + port;
        String noProxy = "localhost,127.0.0.1,::1";
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : new String[] {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy", "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
                "PIP_PROXY", "GRPC_PROXY", "grpc_proxy", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY"}) {
            env.put(name, url);
        }
        env.put("NO_PROXY", noProxy);
        env.put("no_proxy", noProxy);
        env.put("npm_config_noproxy", noProxy);
        env.put("NODE_USE_ENV_PROXY", "1");
        for (String name : new String[] {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "PIP_CERT",
                "GIT_SSL_CAINFO", "CURL_CA_BUNDLE", "npm_config_cafile"}) {
            env.put(name, bundle);
        }
        env.put("JAVA_TOOL_OPTIONS", String.join(" ",
                "-Dhttp.proxyHost=127.0.0.1", "-Dhttp.proxyPort=" + port,
                "-Dhttps.proxyHost=127.0.0.1", "-Dhttps.proxyPort=" + port,
                "-Dhttp.nonProxyHosts=localhost|127.0.0.1",
                "-Djavax.net.ssl.trustStore=" + p12, "-Djavax.net.ssl.trustStoreType=PKCS12",
                "-Djavax.net.ssl.trustStorePassword=" + TrustFiles.P12_PASSWORD));
        return env;
    }
}
