package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.NpmRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 14 item 2): npm asks for a scoped package as {@code /@scope%2fpkg}, and the proxy refused every
 * escaped slash ({@code invalid_path}) before any rule ran, so no policy could let {@code npm install @scope/pkg}
 * through an intercepted registry rule. A real npm client, configured only by the project's {@code .npmrc}
 * (registry, {@code https-proxy}, {@code cafile}), installs a scoped package from a registry served on loopback over
 * TLS, through the proxy, under a read-only rule with {@code allow_encoded_slash: true}; the request goes upstream with
 * npm's own spelling. The same install under the rule without the option is refused {@code invalid_path}.
 */
class NpmScopedPackageTest {

    static final String HOST = "registry.example.test";

    @Test
    void npmInstallsAScopedPackageThroughARuleThatAllowsEncodedSlashes() throws Exception {
        Prerequisites.require("npm", npmAvailable(), "npm on PATH (Debian: apt-get install npm)");
        try (Rig rig = new Rig(true)) {
            ExternalProcess.Result install = rig.npm("install", "--no-audit", "--no-fund");
            assertThat(install.exit()).as(install.stdout() + install.stderr()).isZero();
            Path installed = rig.project.resolve("node_modules/@scope/pkg");
            assertThat(Files.readString(installed.resolve("index.js"))).isEqualTo("module.exports = 42;\n");
            assertThat(Files.readString(installed.resolve("package.json"))).contains("\"@scope/pkg\"");
            assertThat(rig.registry.received()).as("npm's own spelling reached the registry")
                    .anySatisfy(l -> assertThat(l).matches("GET /@scope%2[fF]pkg HTTP/1.1"))
                    .anySatisfy(l -> assertThat(l).isEqualTo("GET /@scope/pkg/-/pkg-1.0.0.tgz HTTP/1.1"));
            AuditFields packument = rig.events.await("exchange", f -> "/@scope%2fpkg".equalsIgnoreCase(f.path()));
            assertThat(packument.decision()).isEqualTo("allow");
            assertThat(packument.rule()).isEqualTo("npm-read");
            assertThat(packument.status()).isEqualTo(200);
        }
    }

    @Test
    void withoutTheOptionTheScopedNameIsRefusedAsAnInvalidPath() throws Exception {
        Prerequisites.require("npm", npmAvailable(), "npm on PATH (Debian: apt-get install npm)");
        try (Rig rig = new Rig(false)) {
            ExternalProcess.Result install = rig.npm("install", "--no-audit", "--no-fund", "--fetch-retries=0");
            assertThat(install.exit()).as(install.stdout() + install.stderr()).isNotZero();
            assertThat(install.stdout() + install.stderr()).contains("403");
            AuditFields refused = rig.events.await("request", f -> "invalid_path".equals(f.reason()));
            assertThat(refused.decision()).isEqualTo("deny");
            assertThat(rig.registry.received()).as("nothing reached the registry").isEmpty();
        }
    }

    static boolean npmAvailable() {
        try {
            return ExternalProcess.run(Duration.ofSeconds(30), List.of("npm", "--version"), null).exit() == 0;
        } catch (java.io.UncheckedIOException notInstalled) {
            return false;
        }
    }

    /** A registry with {@code @scope/pkg}, a proxy in front of it, and a project whose .npmrc points npm at both. */
    static final class Rig implements AutoCloseable {
        final NpmRegistry registry;
        final SallyportProxy proxy;
        final RecordingListener events = new RecordingListener();
        final Path dir;
        final Path project;

        Rig(boolean allowEncodedSlash) throws Exception {
            dir = ProxyFixture.tempDir();
            TestPki pki = TestPki.create();
            TestPki.Issued cert = pki.issue(HOST);
            registry = NpmRegistry.start(cert.key(), cert.chain(), HOST)
                    .publish("@scope/pkg", "1.0.0", Map.of("index.js", "module.exports = 42;\n"));
            String yaml = ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + registry.port(), "",
                            "  - name: npm-read\n    hosts: [" + HOST + "]\n    ports: [" + registry.port() + "]\n"
                                    + "    methods: [GET, HEAD]\n"
                                    + (allowEncodedSlash ? "    allow_encoded_slash: true\n" : ""))
                    .replace("AUDIT_PATH", dir.resolve("audit.jsonl").toString());
            CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport npm Test CA");
            Path caPem = dir.resolve("proxy-ca.pem");
            Files.write(caPem, CaExport.pem(ca, false));
            proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "npm-test.yaml")).withCa(ca)
                    .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                    .withListener(events).withResolver(new MapResolver().map(HOST, "127.0.0.1"))
                    .withPlaceholders(Placeholders.ephemeral()));
            project = Files.createDirectories(dir.resolve("app"));
            Files.writeString(project.resolve("package.json"),
                    "{\"name\":\"app\",\"version\":\"1.0.0\",\"private\":true,\"dependencies\":{\"@scope/pkg\":\"1.0.0\"}}\n");
            String proxyUrl = "http://127.0.0.1:" + proxy.address().getPort() + "/";
            Files.writeString(project.resolve(".npmrc"), String.join("\n",
                    "registry=" + registry.url(),
                    "https-proxy=" + proxyUrl,
                    "proxy=" + proxyUrl,
                    "noproxy=",
                    "cafile=" + caPem,
                    "cache=" + dir.resolve("npm-cache"),
                    "audit=false",
                    "fund=false",
                    "update-notifier=false",
                    "fetch-retries=0",
                    "") );
            Files.createDirectories(dir.resolve("home"));
        }

        /** npm in the project folder, with a home of its own (no user .npmrc) and no proxy variables of the caller. */
        ExternalProcess.Result npm(String... args) {
            List<String> command = new java.util.ArrayList<>(List.of("npm", "--prefix", project.toString()));
            command.addAll(List.of(args));
            return ExternalProcess.run(Duration.ofSeconds(120), command, null, Map.of("HOME",
                    dir.resolve("home").toString(), "npm_config_userconfig", dir.resolve("home/.npmrc").toString(),
                    "HTTPS_PROXY", "", "HTTP_PROXY", "", "https_proxy", "", "http_proxy", "", "NO_PROXY", "",
                    "no_proxy", ""));
        }

        @Override
        public void close() {
            proxy.close();
            registry.close();
        }
    }
}
