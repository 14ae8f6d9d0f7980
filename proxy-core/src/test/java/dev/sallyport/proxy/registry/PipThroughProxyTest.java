package dev.sallyport.proxy.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import dev.sallyport.testing.tools.PythonIndex;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real {@code pip install} through the proxy against a local Simple index (PEP 691 JSON with PEP 700 upload times,
 * and HTML) whose wheels were uploaded "a month ago" and "an hour ago" by its own clock, under a registry entry with
 * {@code min_release_age: 7d} and an OSV record: pip installs the newest allowed version, a pinned refused one fails
 * with the reason in pip's output, and the wheel is never fetched from upstream.
 */
class PipThroughProxyTest {

    private static final String HOST = "pypi.example.test";

    static Path dir;
    static TestPki pki;
    static HttpsSite site;
    static Path osv;

    @TempDir
    Path work;

    @BeforeAll
    static void index() throws IOException {
        Prerequisites.require("pip", ExternalProcess.run(Duration.ofSeconds(60), List.of("python3", "-m", "pip",
                "--version"), null).exit() == 0, "python3 -m pip (scripts/install-deps.sh installs python3-pip)");
        dir = ProxyFixture.tempDir();
        pki = TestPki.create();
        site = HttpsSite.start(pki.issue(HOST));
        Instant now = Instant.now();                    // the index's clock
        Instant monthAgo = now.minus(Duration.ofDays(30));
        site.route("/", new PythonIndex()
                .addWheel("tinypkg", "1.0", module("1.0"), monthAgo)
                .addWheel("tinypkg", "1.1", module("1.1"), monthAgo.plus(Duration.ofDays(1)))
                .addWheel("tinypkg", "1.2", module("1.2"), now.minus(Duration.ofHours(1)))
                .addWheel("Bad_Lib", "2.0", Map.of("bad_lib/__init__.py", ""), monthAgo)
                .addWheel("Bad_Lib", "2.1", Map.of("bad_lib/__init__.py", ""), monthAgo));
        osv = dir.resolve("osv");
        Files.createDirectories(osv);
        Files.writeString(osv.resolve("PYSEC-2026-1.json"), """
                {"id": "PYSEC-2026-1", "affected": [{"package": {"ecosystem": "PyPI", "name": "bad-lib"},
                 "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "2.1"}]}]}]}
                """);
    }

    static Map<String, String> module(String version) {
        return Map.of("tinypkg/__init__.py", "VERSION = '" + version + "'\n");
    }

    @AfterAll
    static void stop() {
        site.close();
    }

    static ProxyFixture proxy() throws Exception {
        return ProxyFixture.startWithRegistry(pki.rootPem(dir), dir, "pypi", "pypi", HOST, site.port(), osv, "");
    }

    /** pip with only the proxy's CA trusted and no configuration of the machine's (files, variables). */
    ExternalProcess.Result pip(ProxyFixture p, Path target, String... requirements) throws IOException {
        Path links = Files.createDirectories(work.resolve("no-links"));
        String ca = p.caPem.toString();
        List<String> cmd = new ArrayList<>(List.of("python3", "-m", "pip", "install", "--no-cache-dir",
                "--disable-pip-version-check", "--no-input", "--retries", "0", "--target", target.toString(),
                "--index-url", "https://" + HOST + ":" + site.port() + "/simple/", "--proxy", p.proxyUrl(),
                "--cert", p.caPem.toString()));
        cmd.addAll(List.of(requirements));
        return ExternalProcess.run(Duration.ofSeconds(120), cmd, null, Map.of("HOME", work.toString(),
                "PIP_CONFIG_FILE", "/dev/null", "NO_PROXY", "", "no_proxy", "", "PIP_FIND_LINKS", links.toString(),
                "PIP_CERT", ca, "REQUESTS_CA_BUNDLE", ca, "SSL_CERT_FILE", ca, "CURL_CA_BUNDLE", ca));
    }

    @Test
    void pipInstallsTheNewestAllowedWheelAndAPinnedRefusedOneFailsWithTheReason() throws Exception {
        try (ProxyFixture p = proxy()) {
            Path target = work.resolve("site");
            ExternalProcess.Result r = pip(p, target, "tinypkg", "bad-lib");
            assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
            assertThat(target.resolve("tinypkg/__init__.py")).content().isEqualTo("VERSION = '1.1'\n");
            assertThat(target.resolve("Bad_Lib-2.0.dist-info")).isDirectory();
            assertThat(site.requests()).filteredOn(q -> q.target().equals("/simple/tinypkg/"))
                    .allSatisfy(q -> assertThat(q.header("Accept")).isEqualTo(PythonIndex.JSON));
            AuditFields tooNew = p.events.await("registry", f -> "1.2".equals(f.version()));
            assertThat(tooNew.reason()).isEqualTo("release_too_new");
            assertThat(tooNew.ecosystem()).isEqualTo("pypi");
            assertThat(tooNew.packageName()).isEqualTo("tinypkg");
            assertThat(p.events.await("registry", f -> "2.1".equals(f.version())).reason())
                    .isEqualTo("known_malicious");

            ExternalProcess.Result pinned = pip(p, work.resolve("pinned"), "tinypkg==1.2");
            assertThat(pinned.exit()).isNotZero();
            assertThat(pinned.stdout() + pinned.stderr()).contains("release_too_new").contains("403");
            assertThat(site.requests()).extracting(HttpsSite.Request::target)
                    .doesNotContain("/files/tinypkg-1.2-py3-none-any.whl");
            AuditFields wheel = p.events.await("request", f -> "/files/tinypkg-1.2-py3-none-any.whl".equals(f.path()));
            assertThat(wheel.decision()).isEqualTo("deny");
            assertThat(wheel.reason()).isEqualTo("release_too_new");
        }
    }

    @Test
    void theHtmlFormIsBuiltFromTheFilteredJson() throws Exception {
        try (ProxyFixture p = proxy()) {
            ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), List.of("curl", "-sS", "--http1.1",
                    "-x", p.proxyUrl(), "--noproxy", "", "--cacert", p.caPem.toString(), "-H", "Accept: text/html",
                    "-D", "-", "https://" + HOST + ":" + site.port() + "/simple/tinypkg/"), null);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(r.stdout()).contains("HTTP/1.1 200").containsIgnoringCase("content-type: text/html")
                    .contains(">tinypkg-1.1-py3-none-any.whl</a>")
                    .containsPattern("data-yanked=\"sallyport: tinypkg==1.2 refused by registry 'pypi': "
                            + "release_too_new[^\"]*\">tinypkg-1.2-py3-none-any.whl</a>");
        }
    }
}
