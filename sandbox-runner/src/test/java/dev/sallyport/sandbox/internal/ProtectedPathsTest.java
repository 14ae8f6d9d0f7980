package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.sandbox.SandboxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The protected names, how they match, and what {@link ProtectedPaths#prepare} does on the host. */
class ProtectedPathsTest {
    @TempDir
    Path ws;

    @Test
    void namesMatchAtTheirScope() {
        assertThat(ProtectedPaths.match(Path.of(".vscode")).path()).isEqualTo(".vscode");
        assertThat(ProtectedPaths.match(Path.of("a/b/.vscode")).path()).isEqualTo(".vscode");
        assertThat(ProtectedPaths.match(Path.of("a/.claude/settings.json")).path()).isEqualTo(".claude/settings.json");
        assertThat(ProtectedPaths.match(Path.of("a/claude/settings.json"))).isNull();
        assertThat(ProtectedPaths.match(Path.of("settings.json"))).isNull();
        assertThat(ProtectedPaths.match(Path.of("x/team.code-workspace")).path()).isEqualTo("*.code-workspace");
        assertThat(ProtectedPaths.match(Path.of(".code-workspace"))).as("the suffix alone is no name").isNull();
        assertThat(ProtectedPaths.match(Path.of(".bashrc")).path()).isEqualTo(".bashrc");
        assertThat(ProtectedPaths.match(Path.of("sub/.bashrc"))).as("rc files count at the root only").isNull();
        assertThat(ProtectedPaths.match(Path.of(".vscode-old"))).isNull();
        assertThat(ProtectedPaths.matchInGit(Path.of(".git/commondir")).path()).isEqualTo(".git/commondir");
        assertThat(ProtectedPaths.matchInGit(Path.of(".git/objects"))).isNull();
        assertThat(ProtectedPaths.matchLink(Path.of("a/.claude")).path()).isEqualTo(".claude");
        assertThat(ProtectedPaths.matchLink(Path.of("a/.vscode"))).isNull();
    }

    @Test
    void masksHoldWhatToolsExpectOfTheName() {
        assertThat(name(".mcp.json").maskContent()).isEqualTo("{}\n");
        assertThat(name(".envrc").maskContent()).isEmpty();
        assertThat(ProtectedPaths.IN_GIT.stream().filter(n -> n.path().equals(".git/commondir")).findFirst()
                .orElseThrow().maskContent()).as("commondir '.' is the repository itself").isEqualTo(".\n");
    }

    @Test
    void everyNameIsDocumentedInTheReadme() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        List<ProtectedPaths.Name> all = new ArrayList<>(ProtectedPaths.NAMES);
        all.addAll(ProtectedPaths.IN_GIT);
        for (ProtectedPaths.Name name : all) {
            assertThat(readme).as(name.path()).contains("`" + name.path() + "`");
        }
    }

    @Test
    void prepareBindsWhatExistsMasksWhatDoesNotAndRemovesOnlyUnchangedMasks() throws Exception {
        Files.createDirectories(ws.resolve("a/b/.vscode"));
        Files.createDirectories(ws.resolve("node_modules/p/.vscode"));
        Files.writeString(ws.resolve(".envrc"), "export A=1\n");
        ProtectedPaths.Plan plan = ProtectedPaths.prepare(ws, false);
        List<Path> bound = plan.readOnly.stream().map(ProtectedPaths.Entry::path).toList();
        assertThat(bound).contains(ws.resolve("a/b/.vscode"), ws.resolve(".envrc"), ws.resolve(".mcp.json"))
                .doesNotContain(ws.resolve("node_modules/p/.vscode"));
        assertThat(plan.pinned).containsExactly(ws.resolve(".amazonq"), ws.resolve(".claude"), ws.resolve(".cursor"),
                ws.resolve(".gemini"), ws.resolve("a"), ws.resolve("a/b"));
        assertThat(ws.resolve(".mcp.json")).hasContent("{}");
        assertThat(plan.gitExcludes()).contains("/.mcp.json", "/.claude/settings.json").doesNotContain("/.envrc");
        Files.writeString(ws.resolve(".gitmodules"), "[submodule \"edited on the host\"]\n");
        ProtectedPaths.removeMasks(plan);
        assertThat(ws.resolve(".mcp.json")).doesNotExist();
        assertThat(ws.resolve(".claude")).doesNotExist();
        assertThat(ws.resolve(".vscode")).doesNotExist();
        assertThat(ws.resolve(".gitmodules")).as("changed since: not ours to remove").exists();
        assertThat(ws.resolve(".envrc")).hasContent("export A=1");
    }

    @Test
    void aLinkInPlaceOfAProtectedNameOrItsFolderIsRefusedAtAnyDepth() throws Exception {
        Files.createDirectories(ws.resolve("sub"));
        Files.createSymbolicLink(ws.resolve("sub/.claude"), ws.resolve("elsewhere"));
        assertThatThrownBy(() -> ProtectedPaths.prepare(ws, false)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("sub/.claude is a symbolic link");
        assertThat(ws.resolve(".mcp.json")).as("nothing left behind").doesNotExist();
    }

    @Test
    void tooManyProtectedEntriesAreRefusedInOneLine() throws Exception {
        for (int i = 0; i <= ProtectedPaths.MAX_MOUNTS; i++) {
            Files.createDirectories(ws.resolve("p" + i + "/.idea"));
        }
        assertThatThrownBy(() -> ProtectedPaths.prepare(ws, false)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("holds 1001 protected entries (expected: at most 1000");
    }

    private static ProtectedPaths.Name name(String path) {
        return ProtectedPaths.NAMES.stream().filter(n -> n.path().equals(path)).findFirst().orElseThrow();
    }
}
