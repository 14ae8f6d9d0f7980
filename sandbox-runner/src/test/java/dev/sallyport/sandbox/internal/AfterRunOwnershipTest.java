package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.Held;
import dev.sallyport.testing.Prerequisites;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A root runner (sudo, the VM backend) puts back and rewrites files in a user's workspace: they stay the user's.
 * The command's part is played on the host (what a sandbox leaves behind); the check after the run is the real one.
 */
class AfterRunOwnershipTest {
    private static final int USER = 4321;

    @TempDir
    Path ws;
    @TempDir
    Path store;

    @Test
    void whatTheCheckPutsBackOrRewritesKeepsItsOwner() throws Exception {
        Prerequisites.requireRoot("only root can give files to another user");
        Path npmrc = Files.writeString(ws.resolve(".npmrc"), "registry=https://registry.example/\n");
        Held.own(npmrc, USER, USER);
        ProtectedPaths.Plan plan = ProtectedPaths.prepare(ws, true, HeldNames.with(List.of()), Held.of(store, ws));
        // what the command left: .npmrc replaced, a repository cloned whose config makes git run a program
        Files.delete(npmrc);
        Files.writeString(npmrc, "registry=https://evil.example/\n");
        Process init = new ProcessBuilder("git", "init", "-q", ws.resolve("nested").toString()).inheritIO().start();
        assertThat(init.waitFor()).isZero();
        Path config = ws.resolve("nested/.git/config");
        Files.writeString(config, "[core]\n\tfsmonitor = touch /tmp/x\n", java.nio.file.StandardOpenOption.APPEND);
        for (Path p : List.of(ws.resolve("nested"), ws.resolve("nested/.git"), config)) {
            Held.own(p, USER, USER);
        }
        List<String> lines = AfterRunCheck.run(plan);
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(".npmrc: changed in the sandbox"))
                .anySatisfy(l -> assertThat(l).contains("nested/.git/config: removed what the host's git would run"));
        assertThat(npmrc).hasContent("registry=https://registry.example/");
        assertThat(Files.getAttribute(npmrc, "unix:uid")).isEqualTo(USER);
        assertThat(Files.readString(config)).doesNotContain("fsmonitor");
        assertThat(Files.getAttribute(config, "unix:uid")).isEqualTo(USER);
        assertThat(Files.getAttribute(config, "unix:gid")).isEqualTo(USER);
    }
}
