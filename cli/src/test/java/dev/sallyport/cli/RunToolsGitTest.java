package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.tools.GitHttpBackend;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * git inside {@code sallyport run} against a forge on {@code git.example.test} that speaks git's smart HTTP
 * protocol ({@code git http-backend}) and accepts only the real token: the run clones into the workspace (a fresh
 * {@code .git} the command may write during the run), commits, pushes, and fetches what the forge added in answer
 * to the push (its {@code post-receive} hook commits to branch {@code reviewed}). The token is a secret: git holds
 * the placeholder in its remote URL (as {@code .git/config} keeps it) and the proxy swaps the real token into
 * the {@code Authorization: Basic} credential. See {@link ToolRun} for how the run is set up.
 */
class RunToolsGitTest {
    private static final String HOST = "git.example.test";
    private static final String SECRET = """
            secrets:
              - name: GIT_TOKEN
                from: env:GIT_TOKEN
                hosts: [%s]
                headers: [Authorization]
            """.formatted(HOST);

    @TempDir
    Path dir;

    private ToolRun tools;
    private HttpsSite forge;
    private Path bare;
    private String token;

    @BeforeEach
    void serve() throws Exception {
        token = "ghs_" + HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(16));
        Path repositories = Files.createDirectories(dir.resolve("forge"));
        bare = GitHttpBackend.bareRepository(repositories, "project", Map.of("README", "the project\n"),
                "the first commit");
        Path hook = bare.resolve("hooks/post-receive");
        Files.writeString(hook, """
                #!/bin/sh
                # the forge's bot answers a push to main with a commit of its own on branch reviewed
                while read old new ref; do
                  [ "$ref" = refs/heads/main ] || continue
                  commit=$(git commit-tree -p "$new" -m "reviewed by the forge" "$new^{tree}")
                  git update-ref refs/heads/reviewed "$commit"
                done
                """);
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        GitHttpBackend backend = new GitHttpBackend(repositories, "/");
        String expected = "Basic " + base64("x-access-token:" + token);
        tools = new ToolRun(dir);
        forge = tools.site(HOST).route("/", exchange -> {
            if (!expected.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
                exchange.getResponseHeaders().add("WWW-Authenticate", "Basic realm=\"forge\"");
                HttpsSite.respond(exchange, 401, "");
                return;
            }
            backend.handle(exchange);
        });
    }

    @AfterEach
    void stop() {
        tools.close();
    }

    @Test
    void cloneCommitPushAndFetchThroughTheProxyWithTheTokenAsASecret() throws IOException {
        ExternalProcess.Result run = tools.run(SECRET, Map.of("GIT_TOKEN", token), cloneCommitAndPush(
                "-c user.name='Dana Developer' -c user.email=dana@example.test",
                "git fetch -q origin",
                "git log -1 --format=%s origin/reviewed > ../reviewed.txt",
                "printf %s \"$GIT_TOKEN\" > ../placeholder.txt"));

        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(GitHttpBackend.git(bare, "log", "-1", "--format=%s|%an <%ae>", "main"))
                .isEqualTo("a sandbox change|Dana Developer <dana@example.test>\n");
        assertThat(GitHttpBackend.git(bare, "show", "main:README")).isEqualTo("the project\nchanged in the sandbox\n");
        assertThat(Files.readString(tools.workspace().resolve("reviewed.txt"))).isEqualTo("reviewed by the forge\n");
        List<String> targets = forge.requests().stream().map(r -> r.method() + " " + r.target()).toList();
        assertThat(targets).as("the forge's requests").contains(
                "GET /project.git/info/refs?service=git-upload-pack", "POST /project.git/git-upload-pack",
                "GET /project.git/info/refs?service=git-receive-pack", "POST /project.git/git-receive-pack");
        assertOnlyTheRealTokenReachedTheForge();
        assertThat(tools.audit()).contains("\"secrets\":[\"GIT_TOKEN\"]").doesNotContain(token);
        assertThat(run.stdout() + run.stderr()).doesNotContain(token);
    }

    /** The host's {@code user.name}/{@code user.email} (its {@code ~/.gitconfig}) sign a commit made inside. */
    @Test
    void aCommitInsideCarriesTheHostsGitIdentity() throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Files.writeString(home.resolve(".gitconfig"), """
                [user]
                \tname = Dana Developer
                \temail = dana@example.test
                """);
        ExternalProcess.Result run = tools.run(SECRET, Map.of("GIT_TOKEN", token, "HOME", home.toString()),
                cloneCommitAndPush(""));

        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(GitHttpBackend.git(bare, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"))
                .isEqualTo("Dana Developer <dana@example.test>|Dana Developer <dana@example.test>\n");
    }

    /**
     * The script: clone the forge's project with the token's placeholder in the URL, change README, commit
     * (with {@code commitOptions} before {@code commit}), push to main, then run {@code more}.
     */
    private String cloneCommitAndPush(String commitOptions, String... more) {
        List<String> steps = new ArrayList<>(List.of(
                "git clone -q \"https://x-access-token:$GIT_TOKEN@" + HOST + ":" + forge.port() + "/project.git\""
                        + " project",
                "cd project",
                "echo 'changed in the sandbox' >> README",
                "git " + commitOptions + " commit -q -am 'a sandbox change'",
                "git push -q origin main"));
        steps.addAll(List.of(more));
        return String.join(" && ", steps);
    }

    private void assertOnlyTheRealTokenReachedTheForge() throws IOException {
        String placeholder = Files.readString(tools.workspace().resolve("placeholder.txt"));
        assertThat(placeholder).matches("sallyport-ph-[a-z2-7]{26}");
        String real = "Basic " + base64("x-access-token:" + token);
        assertThat(forge.requests()).extracting(r -> r.header("Authorization"))
                .as("Authorization values the forge received").contains(real)
                .allMatch(a -> a.isEmpty() || a.equals(real));
        assertThat(forge.requests()).allSatisfy(r -> assertThat(r.target() + r.bodyText()).doesNotContain(placeholder));
    }

    private static String base64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }
}
