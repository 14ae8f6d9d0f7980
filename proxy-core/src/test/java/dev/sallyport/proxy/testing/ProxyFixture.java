package dev.sallyport.proxy.testing;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One proxy for a test: an ephemeral CA (its PEM written for clients), a policy from YAML (the caller's rules,
 * network and limits), a {@link MapResolver} and a {@link RecordingListener}. Close it after the test.
 */
public final class ProxyFixture implements AutoCloseable {

    static {
        LeakCheck.install();
    }

    public final SallyportProxy proxy;
    public final MapResolver resolver;
    public final RecordingListener events = new RecordingListener();
    public final Path caPem;
    public final Path auditFile;
    private static final java.util.concurrent.atomic.AtomicInteger COUNT = new java.util.concurrent.atomic.AtomicInteger();

    private ProxyFixture(String yaml, MapResolver resolver, Path dir) throws Exception {
        this.resolver = resolver;
        auditFile = dir.resolve("audit-" + COUNT.incrementAndGet() + ".jsonl");
        Policy policy = PolicyLoader.parse(yaml.replace("AUDIT_PATH", auditFile.toString()), "test-policy.yaml");
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Test CA");
        caPem = dir.resolve("proxy-ca.pem");
        Files.write(caPem, CaExport.pem(ca, false));
        proxy = SallyportProxy.start(ProxyOptions.of(policy).withCa(ca).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", 0))
                .withListener(events).withResolver(resolver));
    }

    /** {@code yaml} is a whole policy; see {@link #policy} for a helper that fills the usual parts. */
    public static ProxyFixture start(String yaml, MapResolver resolver, Path dir) throws Exception {
        return new ProxyFixture(yaml, resolver, dir);
    }

    /**
     * A policy trusting {@code upstreamRoot} upstream, with the given {@code network:} exceptions, extra
     * {@code proxy:} lines (limits, timeouts) and {@code rules:} body.
     */
    public static String policy(Path upstreamRoot, String allowPrivate, String proxyExtra, String rules) {
        return "proxy:\n  listen: 127.0.0.1:3128\n  admin: 127.0.0.1:9901\n" + proxyExtra
                + "audit:\n  path: AUDIT_PATH\n"
                + "upstream:\n  trust: [" + (upstreamRoot == null ? "system" : upstreamRoot.toString()) + "]\n"
                + "network:\n  deny: default\n  allow_private: [" + allowPrivate + "]\n"
                + "rules:\n" + rules;
    }

    public int port() {
        return proxy.address().getPort();
    }

    public InetSocketAddress address() {
        return proxy.address();
    }

    public String proxyUrl() {
        return "http://127.0.0.1:" + port();
    }

    @Override
    public void close() {
        proxy.close();
    }

    public static Path tempDir() {
        try {
            return Files.createTempDirectory("sallyport-proxy-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
