package dev.sallyport.proxy.git;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.GitHttpBackend;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real {@code git} through the intercepting proxy (HTTPS with the proxy's per-run CA, and plain HTTP) against a
 * local smart-HTTP server ({@code git http-backend}), under {@code git:} entries that let pushes to
 * {@code acme/widgets} update {@code refs/heads/agent/*} only and refuse every other push: clones and fetches work,
 * a push to an allowed ref lands in the server's repository (a pack of several MiB too), a push to another ref, a
 * delete of an allowed ref and a push to another repository are refused with the reason in git's own output, and
 * nothing of them reaches the server's repository.
 */
class GitPushThroughProxyTest {

    private static final String HOST = "git.example.test";

    @TempDir
    Path dir;

    private TestPki pki;
    private HttpsSite site;
    private ProxyFixture proxy;
    private Path widgets;
    private Path other;
    private boolean tls;

    @BeforeAll
    static void git() {
        Prerequisites.require("git", ExternalProcess.run(Duration.ofSeconds(30), List.of("git", "--version"), null)
                .exit() == 0, "git (scripts/install-deps.sh installs it)");
    }

    private void serve(boolean https) throws Exception {
        tls = https;
        Path root = Files.createDirectories(dir.resolve("forge/acme"));
        widgets = GitHttpBackend.bareRepository(root, "widgets", Map.of("README", "widgets\n"), "first");
        other = GitHttpBackend.bareRepository(root, "other", Map.of("README", "other\n"), "first");
        pki = TestPki.create();
        site = https ? HttpsSite.start(pki.issue(HOST)) : HttpsSite.plain();
        site.route("/", new GitHttpBackend(dir.resolve("forge"), "/"));
        String port = Integer.toString(site.port());
        String git = "git:\n"
                + "  - name: agent-branches\n"
                + "    hosts: [" + HOST + "]\n"
                + "    ports: [" + port + "]\n"
                + "    repositories: [acme/widgets]\n"
                + "    push: allow\n"
                + "    refs: [refs/heads/agent/*]\n"
                + "  - name: read-only\n"
                + "    hosts: [" + HOST + "]\n"
                + "    ports: [" + port + "]\n"
                + "    push: deny\n";
        String rules = "  - name: forge\n    hosts: [" + HOST + "]\n    ports: [" + port + "]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), HOST + ":" + port, "", rules) + git,
                new MapResolver().map(HOST, "127.0.0.1"), Files.createDirectories(dir.resolve("proxy")));
    }

    @AfterEach
    void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (site != null) {
            site.close();
        }
    }

    private String url(String repository) {
        return (tls ? "https://" : "http://") + HOST + ":" + site.port() + "/acme/" + repository + ".git";
    }

    /** git through the proxy only (its CA the only one trusted), no configuration of the machine's. */
    private ExternalProcess.Result git(Path in, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", in.toString(), "-c", "http.proxy="
                + proxy.proxyUrl(), "-c", "http.sslCAInfo=" + proxy.caPem, "-c", "credential.helper="));
        command.addAll(List.of(args));
        Map<String, String> env = new HashMap<>(GitHttpBackend.FIXTURE_IDENTITY);
        env.putAll(Map.of("GIT_CONFIG_NOSYSTEM", "1", "GIT_CONFIG_GLOBAL", "/dev/null", "HOME", dir.toString(),
                "NO_PROXY", "", "no_proxy", "", "GIT_TERMINAL_PROMPT", "0",
                "GIT_SSL_CAINFO", proxy.caPem.toString()));
        return ExternalProcess.run(Duration.ofSeconds(120), command, null, env);
    }

    /** Clones {@code repository} through the proxy and commits {@code file} with {@code content} on top. */
    private Path cloneAndCommit(String repository, String file, byte[] content) throws IOException {
        ExternalProcess.Result clone = git(dir, "clone", "-q", url(repository), dir.resolve("work-" + repository)
                .toString());
        assertThat(clone.exit()).as(clone.stderr()).isZero();
        Path work = dir.resolve("work-" + repository);
        assertThat(work.resolve("README")).content().isEqualTo(repository + "\n");
        Files.write(work.resolve(file), content);
        GitHttpBackend.git(work, "add", file);
        GitHttpBackend.git(work, "commit", "-q", "-m", "change " + file);
        return work;
    }

    private static String head(Path repository, String ref) {
        return GitHttpBackend.git(repository, "rev-parse", "--verify", "-q", ref).strip();
    }

    @ParameterizedTest(name = "https={0}")
    @ValueSource(booleans = {true, false})
    void aPushToAnAllowedRefLandsAndOneToAnotherRefIsRefusedWithTheReasonGitPrints(boolean https) throws Exception {
        serve(https);
        Path work = cloneAndCommit("widgets", "change.txt", "agent work\n".getBytes(StandardCharsets.UTF_8));
        String mainBefore = head(widgets, "refs/heads/main");

        ExternalProcess.Result allowed = git(work, "push", "-q", "origin", "HEAD:refs/heads/agent/one");
        assertThat(allowed.exit()).as(allowed.stderr()).isZero();
        assertThat(head(widgets, "refs/heads/agent/one")).isEqualTo(head(work, "HEAD"));

        ExternalProcess.Result refused = git(work, "push", "origin", "HEAD:refs/heads/main");
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.stderr())
                .contains("remote: sallyport: push to acme/widgets refused (git_ref_not_allowed); git entry"
                        + " agent-branches allows pushes to refs/heads/agent/*")
                .contains("remote: sallyport:   refs/heads/main: git_ref_not_allowed")
                .contains("! [remote rejected] HEAD -> main (sallyport git_ref_not_allowed)");
        assertThat(head(widgets, "refs/heads/main")).isEqualTo(mainBefore);

        AuditFields denied = proxy.events.await("request", f -> "deny".equals(f.decision())
                && "/acme/widgets.git/git-receive-pack".equals(f.path()));
        assertThat(denied.reason()).isEqualTo("git_ref_not_allowed");
        assertThat(denied.rule()).isEqualTo("git:agent-branches");
        assertThat(denied.repository()).isEqualTo("acme/widgets");
        assertThat(denied.refs()).containsExactly("refs/heads/main");
        assertThat(denied.refsRefused()).containsExactly("refs/heads/main");
        AuditFields landed = proxy.events.await("exchange", f -> f.refs() != null
                && f.refs().contains("refs/heads/agent/one"));
        assertThat(landed.decision()).isEqualTo("allow");
        assertThat(landed.status()).isEqualTo(200);
        assertThat(landed.repository()).isEqualTo("acme/widgets");
    }

    @Test
    void aPushToAnotherRepositoryIsRefusedAtItsDiscoveryWhileItsCloneAndFetchWork() throws Exception {
        serve(true);
        Path work = cloneAndCommit("other", "change.txt", "elsewhere\n".getBytes(StandardCharsets.UTF_8));
        ExternalProcess.Result fetch = git(work, "fetch", "-q", "origin");
        assertThat(fetch.exit()).as(fetch.stderr()).isZero();
        String before = head(other, "refs/heads/main");

        ExternalProcess.Result refused = git(work, "push", "origin", "HEAD:refs/heads/agent/one");
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.stderr()).contains("remote: sallyport: push to acme/other refused (git_push_denied);"
                + " git entry read-only allows no pushes");
        assertThat(head(other, "refs/heads/main")).isEqualTo(before);
        assertThat(site.requests()).extracting(HttpsSite.Request::target)
                .doesNotContain("/acme/other.git/info/refs?service=git-receive-pack", "/acme/other.git/git-receive-pack");
        assertThat(proxy.events.await("request", f -> "git_push_denied".equals(f.reason())).repository())
                .isEqualTo("acme/other");
    }

    @Test
    void deletingAnAllowedRefIsRefusedUnlessTheEntrySaysDelete() throws Exception {
        serve(true);
        Path work = cloneAndCommit("widgets", "change.txt", "agent work\n".getBytes(StandardCharsets.UTF_8));
        assertThat(git(work, "push", "-q", "origin", "HEAD:refs/heads/agent/keep").exit()).isZero();

        ExternalProcess.Result delete = git(work, "push", "origin", ":refs/heads/agent/keep");
        assertThat(delete.exit()).isNotZero();
        assertThat(delete.stderr()).contains("remote: sallyport:   refs/heads/agent/keep: git_delete_refused")
                .contains("[remote rejected] agent/keep (sallyport git_delete_refused)");
        assertThat(head(widgets, "refs/heads/agent/keep")).isEqualTo(head(work, "HEAD"));
    }

    /** A client that is not git: a command list that does not read, or an encoded body, never reaches the server. */
    @Test
    void aPushBodyThatDoesNotReadAsCommandsIsRefusedUnsent() throws Exception {
        serve(false);
        String url = url("widgets") + "/git-receive-pack";
        for (List<String> odd : List.of(List.of("--data-binary", "00zzrefs/heads/main"),
                List.of("--data-binary", "0001", "-H", "Content-Type: application/x-git-receive-pack-request"),
                List.of("--data-binary", "anything", "-H", "Content-Encoding: gzip"))) {
            List<String> command = new ArrayList<>(List.of("curl", "-sS", "-x", proxy.proxyUrl(), "--noproxy", "",
                    "-D", "-", "-X", "POST", url));
            command.addAll(odd);
            ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), command, null);
            assertThat(r.stdout()).as(odd.toString()).contains("HTTP/1.1 403").containsPattern(
                    "X-Sallyport-Reason: (git_commands_unreadable|git_body_encoded)");
        }
        assertThat(site.requests()).extracting(HttpsSite.Request::method).doesNotContain("POST");
    }

    /** A client that starts a push and never sends its commands does not hold the exchange past the idle timeout. */
    @Test
    void aPushWhoseCommandsNeverComeIsGivenUpAfterTheIdleTimeout() throws Exception {
        serve(false);
        proxy.close();
        String port = Integer.toString(site.port());
        proxy = ProxyFixture.start(ProxyFixture.policy(null, HOST + ":" + port, "  timeouts: {idle: 1s}\n",
                "  - name: forge\n    hosts: [" + HOST + "]\n    ports: [" + port + "]\n") + "git:\n  - name: all\n"
                + "    hosts: [" + HOST + "]\n    ports: [" + port + "]\n    push: allow\n    refs: [\"refs/**\"]\n",
                new MapResolver().map(HOST, "127.0.0.1"), Files.createDirectories(dir.resolve("proxy-idle")));
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(("POST " + url("widgets") + "/git-receive-pack HTTP/1.1\r\nHost: " + HOST + ":"
                    + port + "\r\nContent-Length: 100\r\n\r\n00").getBytes(StandardCharsets.US_ASCII));
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertThat(answer).startsWith("HTTP/1.1 408").contains("X-Sallyport-Reason: git_commands_timeout");
        }
        AuditFields f = proxy.events.await("exchange", r -> "git_commands_timeout".equals(r.reason()));
        assertThat(f.decision()).isEqualTo("deny");
        assertThat(f.status()).isEqualTo(408);
        assertThat(site.requests()).extracting(HttpsSite.Request::method).doesNotContain("POST");
    }

    @Test
    void aPushOfSeveralMebibytesLands() throws Exception {
        serve(true);
        byte[] noise = new byte[6 << 20];       // incompressible: the pack is as large, sent chunked (> postBuffer)
        new Random(18).nextBytes(noise);
        Path work = cloneAndCommit("widgets", "noise.bin", noise);

        ExternalProcess.Result push = git(work, "push", "-q", "origin", "HEAD:refs/heads/agent/big");
        assertThat(push.exit()).as(push.stderr()).isZero();
        assertThat(head(widgets, "refs/heads/agent/big")).isEqualTo(head(work, "HEAD"));
        assertThat(GitHttpBackend.git(widgets, "cat-file", "-s", "refs/heads/agent/big:noise.bin").strip())
                .isEqualTo(Integer.toString(noise.length));
    }
}
