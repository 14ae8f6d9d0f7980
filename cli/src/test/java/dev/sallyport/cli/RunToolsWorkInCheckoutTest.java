package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} as a user runs it in a git checkout, then {@code sallyport accept}: git commits by default,
 * {@code --git-read-only} and the policy's {@code sandbox.git} make .git read-only, tool configs (the built-in table
 * and the policy's {@code sandbox.hold}) are held back and listed at the end of the run, and accept shows the diff
 * and applies what is chosen.
 */
class RunToolsWorkInCheckoutTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(180);

    @TempDir
    Path dir;

    @Test
    void commitsByDefaultHoldsToolConfigsBackAndAcceptAppliesThem() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("ws"));
        git(ws, "init", "-q", "-b", "main");
        Files.writeString(ws.resolve(".npmrc"), "registry=https://registry.example/\n");
        Path policy = Files.writeString(dir.resolve("p.yaml"), "sandbox:\n  hold: [tool.cfg]\n");
        Map<String, String> env = Map.of("SALLYPORT_HOME", dir.resolve("state").toString());
        ExternalProcess.Result run = CliProcess.run(env, TIMEOUT, "run", "--policy", policy.toString(), "--workdir",
                ws.toString(), "--", "sh", "-c", "git add .npmrc && git commit -q -m one && echo commit=ok;"
                        + " echo 'registry=https://evil.example/' > .npmrc; echo x > tool.cfg; echo done");
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stdout()).contains("commit=ok", "done");
        assertThat(git(ws, "log", "--format=%s")).isEqualTo("one\n");
        assertThat(ws.resolve(".npmrc")).hasContent("registry=https://registry.example/");
        assertThat(ws.resolve("tool.cfg")).doesNotExist();
        assertThat(run.stderr()).contains("sallyport: " + ws.resolve(".npmrc") + ": changed in the sandbox (",
                "sallyport: " + ws.resolve("tool.cfg") + ": created in the sandbox (named in the policy's sandbox.hold)",
                "sallyport: 2 changes held back from the workspace; review and apply with: sallyport accept --workdir "
                        + ws);

        ExternalProcess.Result list = CliProcess.run(env, TIMEOUT, "accept", "--workdir", ws.toString(), "--list");
        assertThat(list.stdout()).isEqualTo("change\t.npmrc\tnpm and pnpm take registries, scripts and the shell for "
                + "scripts from it\nchange\ttool.cfg\tnamed in the policy's sandbox.hold\n");
        ExternalProcess.Result shown = CliProcess.run(env, TIMEOUT, "accept", "--workdir", ws.toString());
        assertThat(shown.exit()).isZero();
        assertThat(shown.stdout()).contains("--- a/.npmrc", "+++ b/.npmrc", "-registry=https://registry.example/",
                "+registry=https://evil.example/", "2 changes still held back");
        assertThat(ws.resolve(".npmrc")).as("nothing applied without a terminal or --yes")
                .hasContent("registry=https://registry.example/");
        ExternalProcess.Result accepted = CliProcess.run(env, TIMEOUT, "accept", "--workdir", ws.toString(), "--yes",
                ".npmrc");
        assertThat(accepted.exit()).as(accepted.stderr()).isZero();
        assertThat(accepted.stdout()).contains("applied .npmrc");
        assertThat(ws.resolve(".npmrc")).hasContent("registry=https://evil.example/");
        ExternalProcess.Result dropped = CliProcess.run(env, TIMEOUT, "accept", "--workdir", ws.toString(),
                "--discard");
        assertThat(dropped.stdout()).contains("dropped tool.cfg");
        assertThat(ws.resolve("tool.cfg")).doesNotExist();
        ExternalProcess.Result none = CliProcess.run(env, TIMEOUT, "accept", "--workdir", ws.toString(), "x.cfg");
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.stderr().strip()).isEqualTo("sallyport: PATH: x.cfg holds nothing for " + ws
                + " (expected: one of none: nothing is held)");
    }

    @Test
    void gitReadOnlyByFlagOrPolicyRefusesTheCommit() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("ws"));
        git(ws, "init", "-q", "-b", "main");
        Map<String, String> env = Map.of("SALLYPORT_HOME", dir.resolve("state").toString());
        String commit = "git commit -q --allow-empty -m x; echo commit=$?";
        ExternalProcess.Result flag = CliProcess.run(env, TIMEOUT, "run", "--git-read-only", "--workdir",
                ws.toString(), "--", "sh", "-c", commit);
        assertThat(flag.stdout()).as(flag.stderr()).contains("commit=128");
        assertThat(flag.stderr()).contains("is read-only inside, as asked");
        Path policy = Files.writeString(dir.resolve("p.yaml"), "sandbox: {git: read-only}\n");
        ExternalProcess.Result byPolicy = CliProcess.run(env, TIMEOUT, "run", "--policy", policy.toString(),
                "--workdir", ws.toString(), "--", "sh", "-c", commit);
        assertThat(byPolicy.stdout()).as(byPolicy.stderr()).contains("commit=128");
        ExternalProcess.Result writable = CliProcess.run(env, TIMEOUT, "run", "--git-writable", "--workdir",
                ws.toString(), "--", "sh", "-c", commit);
        assertThat(writable.stdout()).as("--git-writable, the old flag, is still accepted").contains("commit=0");
    }

    private static String git(Path ws, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("git", "-c", "user.name=t", "-c",
                "user.email=t@example.com", "-C", ws.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
