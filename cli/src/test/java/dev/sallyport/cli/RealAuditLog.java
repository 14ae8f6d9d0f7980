package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.audit.AuditKey;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TlsTestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An audit log written by a real proxy: curl sends requests through it to a TLS upstream on loopback, one proxy
 * start per run (each appends to the same log, continuing its chain), with the policy's rules given as YAML.
 */
final class RealAuditLog {

    /** Where the upstream listened (its port) and the log. */
    record Written(Path log, int upstreamPort, Path rootPem) {}

    /** Rules for write: the upstream's paths under /ok/ allowed, every other path denied. */
    static final String OK_PATHS = """
            rules:
              - name: local-api
                cidrs: [127.0.0.1/32]
                ports: [%d]
                paths: ["/ok/**"]
            """;

    private RealAuditLog() {}

    /**
     * Writes dir/audit.jsonl: for each run a proxy start with policyTail (YAML after the upstream and network
     * sections, with %d for the upstream's port) and one curl per entry of the run (its paths on one connection).
     */
    static Written write(Path dir, AuditKey key, String policyTail, List<List<List<String>>> runs) throws Exception {
        return write(dir, key, "", policyTail, runs);
    }

    /** The same, with more of the audit section (", rotate_bytes: 4096"). */
    static Written write(Path dir, AuditKey key, String auditMore, String policyTail, List<List<List<String>>> runs)
            throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        Path log = dir.resolve("audit.jsonl");
        Path rootPem = pki.rootPem(dir);
        Path caPem = dir.resolve("ca.pem");
        CertificateAuthority ca = CertificateAuthority.ephemeral("Real Audit Log CA");
        Files.write(caPem, CaExport.pem(ca, false));
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hi")) {
            String yaml = """
                    upstream:
                      trust: [%s]
                    network:
                      deny: default
                      allow_private: ["127.0.0.1:%d"]
                    audit: {path: %s%s}
                    """.formatted(rootPem, upstream.port(), log, auditMore) + policyTail.replace("%d", "" + upstream.port());
            for (List<List<String>> run : runs) {
                try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "p.yaml"))
                        .withCa(ca).withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                        .withPlaceholders(Placeholders.ephemeral()).withAuditKey(key))) {
                    for (List<String> paths : run) {
                        List<String> curl = new ArrayList<>(List.of("curl", "-sS", "-o", "/dev/null", "--max-time",
                                "20", "-x", "127.0.0.1:" + proxy.address().getPort(), "--cacert", caPem.toString(),
                                "--noproxy", ""));
                        paths.forEach(p -> curl.add("https://127.0.0.1:" + upstream.port() + p));
                        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), curl, null);
                        assertThat(r.exit()).as("curl %s: %s", paths, r.stderr()).isIn(0, 56);
                    }
                    proxy.flushAudit();
                }
            }
            return new Written(log, upstream.port(), rootPem);
        }
    }
}
