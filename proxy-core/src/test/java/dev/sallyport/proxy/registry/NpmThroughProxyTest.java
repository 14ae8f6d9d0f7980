package dev.sallyport.proxy.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.NpmRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real {@code npm install} and {@code npm ci} through the proxy (CONNECT, TLS intercepted, the proxy's CA as npm's
 * {@code cafile}) against a local npm registry whose versions were published "a month ago", "two weeks ago" and "an
 * hour ago" by its own clock, under a registry entry with {@code min_release_age: 7d}, an OSV record, a denied scope
 * and the install-script check. npm asks for the abbreviated document; the registry serves that form too, without
 * times, so a proxy that passed the client's Accept on would have nothing to decide on.
 */
class NpmThroughProxyTest {

    private static final String HOST = "registry.example.test";

    static Path dir;
    static TestPki pki;
    static NpmRegistry registry;
    static Path osv;

    @TempDir
    Path work;

    @BeforeAll
    static void registry() throws IOException {
        Prerequisites.require("npm", ExternalProcess.run(Duration.ofSeconds(30), List.of("npm", "--version"), null)
                .exit() == 0, "npm on PATH (scripts/install-deps.sh installs it)");
        dir = ProxyFixture.tempDir();
        pki = TestPki.create();
        TestPki.Issued leaf = pki.issue(HOST);
        registry = NpmRegistry.start(leaf.key(), leaf.chain(), HOST);
        Instant now = Instant.now();                   // the registry's clock
        Instant monthAgo = now.minus(Duration.ofDays(30));
        Map<String, String> index = Map.of("index.js", "module.exports = 'ok';\n");
        registry.publish("leftish", "1.0.0", index, monthAgo, Map.of())
                .publish("leftish", "1.1.0", index, monthAgo.plus(Duration.ofDays(1)), Map.of())
                .publish("leftish", "1.2.0", index, now.minus(Duration.ofHours(1)), Map.of())
                .publish("@acme/util", "2.0.0", index, monthAgo, Map.of())
                .publish("@evil/steal", "1.0.0", index, monthAgo, Map.of())
                .publish("evil-pkg", "1.0.0", index, monthAgo, Map.of())
                .publish("evil-pkg", "1.0.1", index, monthAgo.plus(Duration.ofDays(2)), Map.of())
                .publish("scripty", "1.0.0", index, monthAgo, Map.of())
                .publish("scripty", "1.1.0", index, now.minus(Duration.ofDays(14)),
                        Map.of("postinstall", "node -e \"require('fs').writeFileSync('/tmp/pwned', 'x')\""));
        osv = dir.resolve("osv");
        Files.createDirectories(osv.resolve("npm"));
        Files.writeString(osv.resolve("npm/MAL-2026-0001.json"), """
                {"id": "MAL-2026-0001", "summary": "Malicious code in evil-pkg",
                 "affected": [{"package": {"ecosystem": "npm", "name": "evil-pkg"}, "versions": ["1.0.1"]}]}
                """);
    }

    @AfterAll
    static void stop() {
        registry.close();
    }

    static ProxyFixture proxy() throws Exception {
        return ProxyFixture.startWithRegistry(pki.rootPem(dir), dir, "npm", "npm", HOST, registry.port(), osv,
                "    deny: [\"@evil/*\"]\n    refuse_added_install_scripts: true\n");
    }

    /** npm in {@code folder} through {@code p}, with a fresh cache and no user configuration. */
    ExternalProcess.Result npm(ProxyFixture p, Path folder, String... args) throws IOException {
        Files.createDirectories(folder);
        Path cache = Files.createTempDirectory(work, "cache");
        Map<String, String> env = new HashMap<>();
        env.put("HOME", work.toString());
        env.put("npm_config_registry", registry.url());
        env.put("npm_config_https_proxy", p.proxyUrl());
        env.put("npm_config_proxy", p.proxyUrl());
        env.put("npm_config_noproxy", "");
        env.put("npm_config_cafile", p.caPem.toString());
        env.put("npm_config_cache", cache.toString());
        env.put("npm_config_audit", "false");
        env.put("npm_config_fund", "false");
        env.put("npm_config_update_notifier", "false");
        env.put("npm_config_fetch_retries", "0");
        env.put("npm_config_ignore_scripts", "true");
        List<String> cmd = new ArrayList<>(List.of("npm", "--prefix", folder.toString()));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(120), cmd, null, env);
    }

    static String installed(Path folder, String name) throws IOException {
        String json = Files.readString(folder.resolve("node_modules/" + name + "/package.json"));
        int at = json.indexOf("\"version\":\"") + 11;
        return json.substring(at, json.indexOf('"', at));
    }

    @Test
    void installPicksTheNewestAllowedVersionAndPinnedBadOnesFailWithTheReason() throws Exception {
        try (ProxyFixture p = proxy()) {
            Path app = work.resolve("app");
            ExternalProcess.Result r = npm(p, app, "install", "leftish", "@acme/util", "evil-pkg", "scripty");
            assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
            assertThat(installed(app, "leftish")).isEqualTo("1.1.0");         // 1.2.0 is an hour old
            assertThat(installed(app, "@acme/util")).isEqualTo("2.0.0");      // a scoped package
            assertThat(installed(app, "evil-pkg")).isEqualTo("1.0.0");        // 1.0.1 is named by the OSV record
            assertThat(installed(app, "scripty")).isEqualTo("1.0.0");         // 1.1.0 adds a postinstall script
            // npm asked for the abbreviated form; the registry was asked for the full one
            assertThat(registry.requests()).filteredOn(q -> q.requestLine().startsWith("GET /leftish "))
                    .allSatisfy(q -> assertThat(q.header("Accept")).isEqualTo("application/json"));

            Map<String, String> reasons = new HashMap<>();
            for (AuditFields f : p.events.all("registry")) {
                reasons.put(f.packageName() + "@" + f.version(), f.reason());
                assertThat(f.ecosystem()).isEqualTo("npm");
                assertThat(f.rule()).isEqualTo("registry:npm");
            }
            assertThat(reasons).containsEntry("leftish@1.2.0", "release_too_new")
                    .containsEntry("evil-pkg@1.0.1", "known_malicious")
                    .containsEntry("scripty@1.1.0", "install_script_added")
                    .doesNotContainKey("leftish@1.1.0");

            ExternalProcess.Result pinned = npm(p, work.resolve("pinned"), "install", "leftish@1.2.0");
            assertThat(pinned.exit()).isNotZero();
            assertThat(pinned.stdout() + pinned.stderr()).contains("release_too_new");
            ExternalProcess.Result malicious = npm(p, work.resolve("malicious"), "install", "evil-pkg@1.0.1");
            assertThat(malicious.exit()).isNotZero();
            assertThat(malicious.stdout() + malicious.stderr()).contains("1.0.1 known_malicious");
            ExternalProcess.Result scope = npm(p, work.resolve("scope"), "install", "@evil/steal");
            assertThat(scope.exit()).isNotZero();
            assertThat(scope.stdout() + scope.stderr()).contains("package_not_allowed");
        }
    }

    @Test
    void ciFromALockfileFetchesTheDocumentItselfAndRefusesAPinnedTarballTooNew() throws Exception {
        Path good = work.resolve("good");
        Path bad = work.resolve("bad");
        lockfile(good, "1.1.0");
        lockfile(bad, "1.2.0");
        try (ProxyFixture p = proxy()) {        // a new proxy: no document seen yet
            ExternalProcess.Result ok = npm(p, good, "ci");
            assertThat(ok.exit()).as(ok.stdout() + ok.stderr()).isZero();
            assertThat(installed(good, "leftish")).isEqualTo("1.1.0");
            ExternalProcess.Result refused = npm(p, bad, "ci");
            assertThat(refused.exit()).isNotZero();
            assertThat(refused.stdout() + refused.stderr()).contains("403").contains("release_too_new")
                    .contains("leftish@1.2.0");
            AuditFields file = p.events.await("registry", f -> "1.2.0".equals(f.version())
                    && f.path().endsWith(".tgz"));
            assertThat(file.reason()).isEqualTo("release_too_new");
            AuditFields request = p.events.await("request", f -> f.path() != null
                    && f.path().equals("/leftish/-/leftish-1.2.0.tgz"));
            assertThat(request.decision()).isEqualTo("deny");
            assertThat(request.status()).isEqualTo(403);
        }
        assertThat(registry.received()).doesNotContain("GET /leftish/-/leftish-1.2.0.tgz HTTP/1.1");
    }

    /** package.json and a version 3 lockfile that pins leftish at {@code version}. */
    static void lockfile(Path folder, String version) throws IOException {
        Files.createDirectories(folder);
        Files.writeString(folder.resolve("package.json"), "{\"name\":\"app\",\"version\":\"1.0.0\","
                + "\"dependencies\":{\"leftish\":\"" + version + "\"}}\n");
        Files.writeString(folder.resolve("package-lock.json"), """
                {"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
                 "packages": {
                   "": {"name": "app", "version": "1.0.0", "dependencies": {"leftish": "%s"}},
                   "node_modules/leftish": {"version": "%s", "resolved": "%s", "integrity": "%s"}}}
                """.formatted(version, version, registry.tarballUrl("leftish", version),
                registry.integrity("leftish", version)));
    }
}
