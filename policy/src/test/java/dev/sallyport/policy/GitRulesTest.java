package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code git:} section: loading, one-line errors, what a URL asks for, the verdicts, and explain. */
class GitRulesTest {

    private static final String ZERO = "0".repeat(40);
    private static final String A = "a".repeat(40);
    private static final String B = "b".repeat(40);

    @TempDir
    Path dir;

    private Policy load(String yaml) throws IOException, PolicyException {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, yaml);
        return PolicyLoader.load(file);
    }

    private PolicyEngine engine() throws Exception {
        return PolicyEngine.compile(load("""
                rules:
                  - name: forge
                    hosts: [git.example.com]
                git:
                  - name: agent
                    hosts: [git.example.com]
                    repositories: [acme/widgets, "acme/tools-*", "sandbox/**"]
                    push: allow
                    refs: ["refs/heads/agent/*", "refs/tags/agent/**"]
                  - name: scratch
                    hosts: [git.example.com]
                    repositories: [acme/scratch]
                    push: allow
                    refs: ["refs/heads/**"]
                    delete: true
                    create_only: true
                  - name: rest
                    hosts: [git.example.com]
                    repositories: ["acme/*"]
                    push: deny
                """));
    }

    @Test
    void entriesDecideEachRefUpdateOfTheirRepositories() throws Exception {
        PolicyEngine e = engine();
        List<GitRule> entries = e.git("git.example.com", 443);
        assertThat(entries).extracting(GitRule::name).containsExactly("agent", "scratch", "rest");
        assertThat(e.git("git.example.com", 80)).isEmpty();
        assertThat(e.git("other.example.com", 443)).isEmpty();

        GitRule agent = GitRule.first(entries, "acme/widgets");
        assertThat(agent.name()).isEqualTo("agent");
        assertThat(GitRule.first(entries, "acme/tools-cli").name()).isEqualTo("agent");
        assertThat(GitRule.first(entries, "sandbox/a/b").name()).isEqualTo("agent");
        assertThat(GitRule.first(entries, "acme/tools-cli/nested")).isNull();
        assertThat(GitRule.first(entries, "acme/other").name()).isEqualTo("rest");
        assertThat(GitRule.first(entries, "elsewhere/x")).isNull();

        assertThat(GitRule.refusal(agent, new RefUpdate(ZERO, A, "refs/heads/agent/x"))).isNull();
        assertThat(GitRule.refusal(agent, new RefUpdate(A, B, "refs/heads/agent/x"))).isNull();
        assertThat(GitRule.refusal(agent, new RefUpdate(A, B, "refs/heads/agent/x/y")))
                .isEqualTo(GitReasons.REF_NOT_ALLOWED);
        assertThat(GitRule.refusal(agent, new RefUpdate(ZERO, A, "refs/tags/agent/v1/rc"))).isNull();
        assertThat(GitRule.refusal(agent, new RefUpdate(A, B, "refs/heads/main"))).isEqualTo(GitReasons.REF_NOT_ALLOWED);
        assertThat(GitRule.refusal(agent, new RefUpdate(A, ZERO, "refs/heads/agent/x")))
                .isEqualTo(GitReasons.DELETE_REFUSED);
        assertThat(GitRule.refusal(agent, new RefUpdate(A, B, "refs/heads/agent/../../heads/main")))
                .isEqualTo(GitReasons.REF_INVALID);
        assertThat(GitRule.refusal(agent, new RefUpdate(A, B, "refs/heads/agent/x\n"))).isEqualTo(GitReasons.REF_INVALID);

        GitRule scratch = GitRule.first(entries, "acme/scratch");
        assertThat(GitRule.refusal(scratch, new RefUpdate(ZERO, A, "refs/heads/main"))).isNull();
        assertThat(GitRule.refusal(scratch, new RefUpdate(A, ZERO, "refs/heads/main"))).isNull();
        assertThat(GitRule.refusal(scratch, new RefUpdate(A, B, "refs/heads/main"))).isEqualTo(GitReasons.UPDATE_REFUSED);

        assertThat(GitRule.refusal(GitRule.first(entries, "acme/other"), new RefUpdate(ZERO, A, "refs/heads/agent/x")))
                .isEqualTo(GitReasons.PUSH_DENIED);
        assertThat(GitRule.refusal(null, new RefUpdate(ZERO, A, "refs/heads/agent/x")))
                .isEqualTo(GitReasons.REPOSITORY_NOT_LISTED);
    }

    @Test
    void aRequestReadsAsAPushOnlyInTheShapesGitSends() {
        assertThat(GitRequest.of("GET", "/acme/widgets.git/info/refs?service=git-receive-pack"))
                .isEqualTo(new GitRequest.PushDiscovery("acme/widgets"));
        assertThat(GitRequest.of("POST", "/acme/widgets/git-receive-pack")).isEqualTo(new GitRequest.Push("acme/widgets"));
        assertThat(GitRequest.of("POST", "//acme/./widgets.git/git%2Dreceive-pack"))
                .isEqualTo(new GitRequest.Push("acme/widgets"));
        assertThat(GitRequest.of("GET", "/acme/widgets.git/info/refs?service=git-upload-pack"))
                .isEqualTo(new GitRequest.Other());
        assertThat(GitRequest.of("POST", "/acme/widgets.git/git-upload-pack")).isEqualTo(new GitRequest.Other());
        for (String odd : List.of("POST /acme/widgets.git/GIT-RECEIVE-PACK", "POST /acme/widgets.git/git-receive-pack/",
                "PUT /acme/widgets.git/git-receive-pack", "GET /a.git/info/refs?service=git-receive-pack&x=1",
                "POST /a.git/git-receive-pack?x", "POST /a%2Fb.git/git-receive-pack")) {
            String[] parts = odd.split(" ", 2);
            assertThat(GitRequest.of(parts[0], parts[1])).as(odd).isInstanceOf(GitRequest.Unreadable.class);
        }
    }

    @Test
    void explainSaysWhichEntryDecidesAPush() throws Exception {
        PolicyEngine e = engine();
        Explain.Explanation other = Explain.explain(e,
                "https://git.example.com/acme/other.git/info/refs?service=git-receive-pack", "GET", null);
        assertThat(other.decision().verdict()).isEqualTo(Verdict.DENY);
        assertThat(other.text()).contains("rule: git:rest (line 17)").contains("reason: git_push_denied")
                .contains("git: the discovery of a push to acme/other (git entry rest, line 17: no pushes)");
        Explain.Explanation push = Explain.explain(e, "https://git.example.com/acme/widgets.git/git-receive-pack",
                "POST", null);
        assertThat(push.decision().verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(push.text()).contains("git: a push to acme/widgets (git entry agent, line 5: pushes to"
                + " refs/heads/agent/*, refs/tags/agent/** (create, update; deletes refused))")
                .contains("then: each ref update of the body is decided");
        assertThat(Explain.explain(e, "https://git.example.com/acme/widgets.git/info/refs?service=git-upload-pack",
                "GET", null).text()).contains("decision: allow").contains("git: not a push");
        assertThat(Explain.explain(e, "https://git.example.com/elsewhere/x.git/git-receive-pack", "POST", null)
                .text()).contains("reason: git_repository_not_listed");
    }

    /** The README's example policy loads and decides as the README says. */
    @Test
    void theReadmeExampleLoads() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int section = readme.indexOf("## Keeping pushes to the refs you allow");
        int start = readme.indexOf("```yaml\n", section) + "```yaml\n".length();
        PolicyEngine e = PolicyEngine.compile(load(readme.substring(start, readme.indexOf("```", start))));
        List<GitRule> entries = e.git("git.example.com", 443);
        assertThat(entries).extracting(GitRule::name).containsExactly("agent-branches", "everything-else");
        assertThat(GitRule.refusal(GitRule.first(entries, "acme/tools-cli"), new RefUpdate(ZERO, A,
                "refs/heads/agent/fix"))).isNull();
        assertThat(GitRule.refusal(GitRule.first(entries, "acme/widgets"), new RefUpdate(A, B, "refs/heads/main")))
                .isEqualTo(GitReasons.REF_NOT_ALLOWED);
        assertThat(GitRule.discoveryRefusal(GitRule.first(entries, "acme/other"))).isEqualTo(GitReasons.PUSH_DENIED);
    }

    @Test
    void everyMistakeIsOneLine() {
        PolicyException e = catchThrowableOfType(PolicyException.class, () -> load("""
                git:
                  - name: no-refs
                    hosts: [git.example.com]
                    push: allow
                  - name: refs-on-deny
                    hosts: ["*.example.com"]
                    push: deny
                    refs: [refs/heads/x]
                    delete: true
                  - name: bad
                    hosts: [git.example.com]
                    repositories: [/acme/x.git]
                    push: sometimes
                    refs: [heads/main]
                    force: true
                """));
        String file = dir.resolve("policy.yaml").toString();
        assertThat(e.problems()).extracting(PolicyProblem::toString).containsExactly(
                file + ":2:5: git[0].refs: is missing (expected: with push: allow, the refs a push may update (refs:"
                        + " [refs/heads/agent/*]))",
                file + ":6:13: git[1].hosts[0]: '*.example.com' is a wildcard (expected: an exact host name such as"
                        + " git.example.com (no wildcards))",
                file + ":8:11: git[1].refs: is given with push: deny (expected: refs only with push: allow (push: deny"
                        + " refuses every push))",
                file + ":9:13: git[1].delete: is given with push: deny (expected: delete only with push: allow)",
                file + ":12:20: git[2].repositories[0]: '/acme/x.git' is not a repository glob (expected: a"
                        + " repository path or glob such as acme/widgets or acme/* (no leading '/', no '.git'; '*'"
                        + " within a segment, '**' across))",
                file + ":13:11: git[2].push: 'sometimes' is neither allow nor deny (expected: allow or deny)",
                file + ":14:12: git[2].refs[0]: 'heads/main' is not a ref glob (expected: a ref or glob under refs/,"
                        + " such as refs/heads/agent/* or refs/tags/**)",
                file + ":15:5: git[2].force: unknown key 'force' (expected: one of create_only, delete, hosts, name,"
                        + " ports, push, refs, repositories)");
    }
}
