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

    public final SallyportProxy proxy;
    public final MapResolver resolver;
    public final RecordingListener events = new RecordingListener();
    public final Path caPem;
    public final Path auditFile;
    private static final java.util.concurrent.atomic.AtomicInteger COUNT = new java.util.concurrent.atomic.AtomicInteger();

    private ProxyFixture(String yaml, MapResolver resolver, Path dir, Path policyFile) throws Exception {
        this(yaml, resolver, dir, policyFile, null);
    }

    private ProxyFixture(String yaml, MapResolver resolver, Path dir, Path policyFile,
                         dev.sallyport.proxy.ProxyOptions.Capture capture) throws Exception {
        this.resolver = resolver;
        auditFile = dir.resolve("audit-" + COUNT.incrementAndGet() + ".jsonl");
        String text = yaml.replace("AUDIT_PATH", auditFile.toString());
        Policy policy;
        if (policyFile == null) {
            policy = PolicyLoader.parse(text, "test-policy.yaml");
        } else {
            Files.writeString(policyFile, text);
            policy = PolicyLoader.load(policyFile);
        }
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Test CA");
        caPem = dir.resolve("proxy-ca.pem");
        Files.write(caPem, CaExport.pem(ca, false));
        proxy = SallyportProxy.start(ProxyOptions.of(policy).withCa(ca).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", 0))
                .withListener(events).withResolver(resolver).withCapture(capture));
    }

    /** Like {@link #start}, with the DNS stub (A answers only) and the transparent listener on loopback. */
    public static ProxyFixture startWithCapture(String yaml, MapResolver resolver, Path dir) throws Exception {
        return new ProxyFixture(yaml, resolver, dir, null, new dev.sallyport.proxy.ProxyOptions.Capture(
                new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1", 0), false));
    }

    /** Like {@link #start}, with {@code capture}'s DNS stub and transparent listener. */
    public static ProxyFixture startWithCapture(String yaml, MapResolver resolver, Path dir,
                                                dev.sallyport.proxy.ProxyOptions.Capture capture) throws Exception {
        return new ProxyFixture(yaml, resolver, dir, null, capture);
    }

    /** {@code yaml} is a whole policy; see {@link #policy} for a helper that fills the usual parts. */
    public static ProxyFixture start(String yaml, MapResolver resolver, Path dir) throws Exception {
        return new ProxyFixture(yaml, resolver, dir, null);
    }

    /**
     * Like {@link #start}, with the policy written to {@code policyFile} first and loaded from it, so that
     * {@link #reload} can replace it (keep {@code dir}, where the audit goes, outside the file's folder).
     */
    public static ProxyFixture startFromFile(String yaml, Path policyFile, MapResolver resolver, Path dir)
            throws Exception {
        return new ProxyFixture(yaml, resolver, dir, policyFile);
    }

    /** Replaces the policy file (one atomic move) and reloads it; fails unless the reload succeeded. */
    public void reload(String yaml) throws IOException {
        Path file = proxy.policies().source();
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, yaml.replace("AUDIT_PATH", auditFile.toString()));
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        if (!proxy.policies().reload().success()) {
            throw new AssertionError("policy reload failed: " + events.events);
        }
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

    /**
     * A proxy whose policy has one {@code registries:} entry for {@code host} on {@code port} (resolved to loopback),
     * with a week's {@code min_release_age}, the advisories in {@code advisories} and {@code extra} lines of the entry
     * (each indented by four spaces, ending in a line feed); upstream trust is {@code upstreamRoot}.
     */
    public static ProxyFixture startWithRegistry(Path upstreamRoot, Path dir, String name, String ecosystem,
                                                 String host, int port, Path advisories, String extra)
            throws Exception {
        String registries = "registries:\n"
                + "  - name: " + name + "\n"
                + "    ecosystem: " + ecosystem + "\n"
                + "    hosts: [" + host + "]\n"
                + "    ports: [" + port + "]\n"
                + "    min_release_age: 7d\n"
                + "    advisories: " + advisories + "\n"
                + extra;
        return start(policy(upstreamRoot, host + ":" + port, "", "") + registries,
                new MapResolver().map(host, "127.0.0.1"), dir);
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
