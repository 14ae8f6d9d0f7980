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
    @TempDir
    Path store;

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
        assertThat(ProtectedPaths.matchInGit(Path.of("vendor/lib/.git/hooks")).path()).as("nested repositories too")
                .isEqualTo(".git/hooks");
        assertThat(ProtectedPaths.matchLink(Path.of("a/.claude")).path()).isEqualTo(".claude");
        assertThat(ProtectedPaths.matchLink(Path.of("a/.vscode"))).isNull();
    }

    @Test
    void masksHoldWhatToolsExpectOfTheName() {
        assertThat(name(".mcp.json").maskContent()).isEqualTo("{}\n");
        assertThat(name(".gitmodules").maskContent()).isEmpty();
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
        Files.writeString(ws.resolve(".devcontainer.json"), "{\"a\":1}\n");
        ProtectedPaths.Plan plan = prepare(false);
        List<Path> bound = plan.readOnly.stream().map(ProtectedPaths.Entry::path).toList();
        assertThat(bound).contains(ws.resolve("a/b/.vscode"), ws.resolve(".devcontainer.json"), ws.resolve(".mcp.json"))
                .doesNotContain(ws.resolve("node_modules/p/.vscode"));
        assertThat(plan.pinned).containsExactly(ws.resolve(".amazonq"), ws.resolve(".claude"), ws.resolve(".cursor"),
                ws.resolve(".gemini"), ws.resolve("a"), ws.resolve("a/b"));
        assertThat(ws.resolve(".mcp.json")).hasContent("{}");
        assertThat(plan.gitExcludes()).contains("/.mcp.json", "/.claude/settings.json").doesNotContain("/.devcontainer.json");
        Files.writeString(ws.resolve(".gitmodules"), "[submodule \"edited on the host\"]\n");
        ProtectedPaths.removeMasks(plan);
        assertThat(ws.resolve(".mcp.json")).doesNotExist();
        assertThat(ws.resolve(".claude")).doesNotExist();
        assertThat(ws.resolve(".vscode")).doesNotExist();
        assertThat(ws.resolve(".gitmodules")).as("changed since: not ours to remove").exists();
        assertThat(ws.resolve(".devcontainer.json")).hasContent("{\"a\":1}");
    }

    @Test
    void aLinkInPlaceOfAProtectedNameOrItsFolderIsRefusedAtAnyDepth() throws Exception {
        Files.createDirectories(ws.resolve("sub"));
        Files.createSymbolicLink(ws.resolve("sub/.claude"), ws.resolve("elsewhere"));
        assertThatThrownBy(() -> prepare(false)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("sub/.claude is a symbolic link");
        assertThat(ws.resolve(".mcp.json")).as("nothing left behind").doesNotExist();
    }

    @Test
    void tooManyProtectedEntriesAreRefusedInOneLine() throws Exception {
        for (int i = 0; i <= ProtectedPaths.MAX_MOUNTS; i++) {
            Files.createDirectories(ws.resolve("p" + i + "/.idea"));
        }
        assertThatThrownBy(() -> prepare(false)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("holds 1001 protected entries (expected: at most 1000");
    }

    @Test
    void withGitWritableEveryRepositoryIsPinnedAndItsHooksAndConfigAreBoundOrMasked() throws Exception {
        Files.createDirectories(ws.resolve(".git/hooks"));
        Files.writeString(ws.resolve(".git/config"), "[core]\n");
        Files.createDirectories(ws.resolve("vendor/lib/.git/hooks"));
        Files.writeString(ws.resolve("vendor/lib/.git/config"), "[core]\n");
        Files.createDirectories(ws.resolve("node_modules/p/.git"));
        ProtectedPaths.Plan plan = prepare(true);
        List<Path> bound = plan.readOnly.stream().map(ProtectedPaths.Entry::path).toList();
        assertThat(bound).contains(ws.resolve(".git/hooks"), ws.resolve(".git/config"), ws.resolve(".git/commondir"),
                        ws.resolve("vendor/lib/.git/hooks"), ws.resolve("vendor/lib/.git/config"),
                        ws.resolve("vendor/lib/.git/commondir"), ws.resolve("vendor/lib/.git/modules"))
                .doesNotContain(ws.resolve(".git"), ws.resolve("vendor/lib/.git"));
        assertThat(plan.pinned).contains(ws.resolve(".git"), ws.resolve("vendor"), ws.resolve("vendor/lib"),
                ws.resolve("vendor/lib/.git")).doesNotContain(ws.resolve("node_modules/p/.git"));
        assertThat(plan.gitExcludes()).noneMatch(line -> line.contains(".git/"));
        ProtectedPaths.removeMasks(plan);
        assertThat(ws.resolve("vendor/lib/.git/commondir")).doesNotExist();
        assertThat(ws.resolve("vendor/lib/.git/modules")).doesNotExist();
    }

    @Test
    void heldNamesMatchInEveryFolderButNodeModulesAndTheTableIsInTheReadme() throws Exception {
        HeldNames names = HeldNames.with(List.of("tools/x.cfg"));
        assertThat(names.match(Path.of("a/b/.npmrc"), ".npmrc").path()).isEqualTo(".npmrc");
        assertThat(names.match(Path.of("svc/.cargo/config.toml"), "config.toml").path()).isEqualTo(".cargo/config.toml");
        assertThat(names.match(Path.of("config.toml"), "config.toml")).isNull();
        assertThat(names.match(Path.of("a/tools/x.cfg"), "x.cfg").why()).contains("sandbox.hold");
        String readme = Files.readString(Path.of("../README.md"));
        for (HeldNames.Name name : HeldNames.BUILT_IN) {
            assertThat(readme).as(name.path()).contains("`" + name.path() + "`");
        }
    }

    private ProtectedPaths.Plan prepare(boolean gitWritable) throws SandboxException {
        return ProtectedPaths.prepare(ws, gitWritable, HeldNames.with(List.of()),
                dev.sallyport.sandbox.Held.of(store, ws));
    }

    private static ProtectedPaths.Name name(String path) {
        return ProtectedPaths.NAMES.stream().filter(n -> n.path().equals(path)).findFirst().orElseThrow();
    }
}
