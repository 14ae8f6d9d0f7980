package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which home folders the caller's PATH needs shown, which it must never get, and the PATH inside. */
class HomeToolsTest {
    @TempDir
    Path home;

    @Test
    void toolFoldersAreShownWithTheirRootsAndSecretsNever() throws Exception {
        for (String dir : List.of(".pyenv/shims", ".pyenv/versions/3.12/bin", ".cargo/bin", ".rustup/toolchains",
                ".local/bin", ".local/share/sallyport", ".nvm/versions/node/v22.1.0/bin", "bin", ".ssh/bin",
                ".config/gh", "ws/node_modules/.bin")) {
            Files.createDirectories(home.resolve(dir));
        }
        String path = String.join(":", home.resolve(".pyenv/shims").toString(), home.resolve(".cargo/bin").toString(),
                home.toString(), "relative/bin", "", home.resolve(".ssh/bin").toString(),
                home.resolve(".local/bin").toString(), home.resolve("ws/node_modules/.bin").toString(),
                "/usr/lib/jvm/jdk/bin", home.resolve(".nvm/versions/node/v22.1.0/bin").toString(),
                home.resolve(".local").toString(), home.resolve("not-there/bin").toString(), "/usr/bin");
        HomeTools.Plan plan = HomeTools.plan(Map.of("PATH", path), home.resolve("bin/agent").toString(), home,
                List.of(home.resolve("ws")));

        assertThat(plan.shown()).containsExactly(home.resolve(".pyenv"), home.resolve(".cargo/bin"),
                home.resolve(".rustup"), home.resolve(".local/bin"), home.resolve(".nvm/versions/node/v22.1.0"),
                home.resolve("bin"));
        assertThat(plan.path()).isEqualTo(String.join(":", home.resolve(".pyenv/shims").toString(),
                home.resolve(".cargo/bin").toString(), home.resolve(".local/bin").toString(),
                home.resolve("ws/node_modules/.bin").toString(), "/usr/lib/jvm/jdk/bin",
                home.resolve(".nvm/versions/node/v22.1.0/bin").toString(), "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/sbin", "/bin"));
        assertThat(plan.notices()).containsExactly(
                "shown read-only from the home folder for the tools on PATH: " + home.resolve(".pyenv") + ", "
                        + home.resolve(".cargo/bin") + ", " + home.resolve(".rustup") + ", "
                        + home.resolve(".local/bin") + ", " + home.resolve(".nvm/versions/node/v22.1.0") + ", "
                        + home.resolve("bin") + " (--allow-read FOLDER shows more)",
                "PATH entry " + home + " is not shown: it is the home folder, which holds secrets (expected: a tool "
                        + "folder; --allow-read FOLDER shows one)",
                "PATH entry " + home.resolve(".ssh/bin") + " is not shown: it lies in " + home.resolve(".ssh")
                        + ", which holds secrets (expected: a tool folder; --allow-read FOLDER shows one)",
                "PATH entry " + home.resolve(".local") + " is not shown: it holds " + home.resolve(".local/share")
                        + ", which holds secrets (expected: a tool folder; --allow-read FOLDER shows one)");
    }

    @Test
    void withoutACallerPathTheSandboxKeepsItsOwnAndShowsNothing() {
        HomeTools.Plan plan = HomeTools.plan(Map.of(), "sh", home, List.of());
        assertThat(plan.shown()).isEmpty();
        assertThat(plan.notices()).isEmpty();
        assertThat(plan.path()).isEqualTo(SandboxEnvironment.DEFAULT_PATH);
    }

    @Test
    void aLinkIsJudgedWhereItLeads() throws Exception {
        Files.createDirectories(home.resolve(".ssh"));
        Files.createSymbolicLink(home.resolve("bin"), home.resolve(".ssh"));
        Files.createSymbolicLink(home.resolve("all"), home);
        HomeTools.Plan plan = HomeTools.plan(Map.of("PATH", home.resolve("bin") + ":" + home.resolve("all")), "sh",
                home, List.of());
        assertThat(plan.shown()).isEmpty();
        assertThat(plan.notices()).containsExactly(
                "PATH entry " + home.resolve("bin") + " is not shown: it lies in " + home.resolve(".ssh").toRealPath()
                        + ", which holds secrets (expected: a tool folder; --allow-read FOLDER shows one)",
                "PATH entry " + home.resolve("all") + " is not shown: it is the home folder, which holds secrets"
                        + " (expected: a tool folder; --allow-read FOLDER shows one)");
    }

    @Test
    void sallyportsOwnStateIsASecretWhereverItLives() throws Exception {
        Path state = Files.createDirectories(home.resolve("tools/sallyport-state"));
        Files.createDirectories(home.resolve("tools/bin"));
        HomeTools.Plan plan = HomeTools.plan(Map.of("PATH", home.resolve("tools").toString() + ":"
                + home.resolve("tools/bin"), "SALLYPORT_HOME", state.toString()), "sh", home, List.of());
        assertThat(plan.shown()).containsExactly(home.resolve("tools/bin"));
        assertThat(plan.notices()).anySatisfy(line -> assertThat(line).startsWith("PATH entry " + home.resolve("tools")
                + " is not shown: it holds " + state));
    }
}
