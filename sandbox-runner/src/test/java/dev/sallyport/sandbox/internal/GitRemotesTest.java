package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SSH remotes of a repository that real git made, of every URL shape git reaches over SSH or not. */
class GitRemotesTest {

    @TempDir
    Path dir;

    @Test
    void everySshShapeIsFoundAndHttpsAndLocalRemotesAreNot() throws Exception {
        git("init", "-q");
        git("remote", "add", "origin", "git@git.example.com:acme/app.git");
        git("remote", "add", "scp", "git.example.com:acme/app.git");
        git("remote", "add", "url", "ssh://git@git.example.com/acme/app.git");
        git("remote", "add", "plus", "git+ssh://git.example.com/acme/app.git");
        git("remote", "add", "https", "https://git.example.com/acme/app.git");
        git("remote", "add", "local", "/srv/git/app.git");
        git("remote", "add", "relative", "../app.git");
        git("remote", "add", "pushonly", "https://git.example.com/acme/app.git");
        git("remote", "set-url", "--push", "pushonly", "git@git.example.com:acme/app.git");

        assertThat(GitRemotes.sshRemotes(dir.resolve(".git/config")))
                .containsExactly("origin", "scp", "url", "plus", "pushonly");
        assertThat(GitRemotes.sshNotice(dir)).hasValueSatisfying(line -> assertThat(line)
                .startsWith("git remote origin, scp, url, plus, pushonly of " + dir + " uses SSH")
                .contains("an https:// remote"));
    }

    @Test
    void noRepositoryOrOnlyHttpsRemotesSayNothing() {
        assertThat(GitRemotes.sshNotice(dir)).isEmpty();
        git("init", "-q");
        git("remote", "add", "origin", "https://git.example.com/acme/app.git");
        assertThat(GitRemotes.sshNotice(dir)).isEmpty();
    }

    @Test
    void anSshUrlOutsideARemoteSectionIsNoRemote() throws Exception {
        git("init", "-q");
        Files.writeString(dir.resolve(".git/config"), """
                [submodule "lib"]
                \turl = git@git.example.com:acme/lib.git
                [remote "origin"]
                \turl = "https://git.example.com/acme/app.git"
                [branch "main"]
                \tremote = origin
                """);
        assertThat(GitRemotes.sshRemotes(dir.resolve(".git/config"))).isEmpty();
    }

    private void git(String... args) {
        List<String> argv = new java.util.ArrayList<>(List.of("git", "-C", dir.toString()));
        argv.addAll(List.of(args));
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), argv, null);
        assertThat(r.exit()).as(r.stderr()).isZero();
    }
}
