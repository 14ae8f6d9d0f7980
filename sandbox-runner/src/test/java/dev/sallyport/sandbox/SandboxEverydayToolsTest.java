package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.internal.EtcMounts;
import dev.sallyport.sandbox.internal.PackageCaches;
import dev.sallyport.testing.Prerequisites;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Everyday tools inside a real sandbox, configured only by what the sandbox gives them: the host's {@code /etc}
 * (without its secrets, which an attacker inside cannot read), Debian's {@code mvn}, tools under the home folder
 * found through the caller's {@code PATH}, the host's git identity (and nothing else of its git config), the line
 * about a read-only {@code .git}, and package caches kept per workspace.
 */
@Timeout(180)
@ExtendWith(Fixture.Extension.class)
class SandboxEverydayToolsTest {

    @Test
    void noMaskedEtcEntryCanBeReadInsideAndTheRestOfEtcIsThere(Fixture f) throws Exception {
        List<Path> masked = EtcMounts.masked(Path.of("/etc"));
        if (Files.exists(Path.of("/etc/shadow"))) {
            assertThat(masked).contains(Path.of("/etc/shadow"));
        }
        // Files only root may read stay unreadable without a mask too: the masks of files anyone may read
        // (machine-id, passwd-, subuid, fstab, ...) are what this test shows working.
        assertThat(masked).as("a masked file that everyone could read on this host").anySatisfy(p -> assertThat(
                Files.isRegularFile(p) && Files.size(p) > 0 && Files.getPosixFilePermissions(p)
                        .contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)).isTrue());
        StringBuilder script = new StringBuilder();
        for (Path p : masked) {
            // every way of reading it: as a folder (its entries), as a file (its bytes), through a link to it
            script.append("p='").append(p).append("'; if [ -d \"$p\" ]; then echo \"$p dir $(ls -A \"$p\" | wc -l)\";")
                    .append(" else echo \"$p file $(cat \"$p\" 2>/dev/null | wc -c)\"; fi; ");
        }
        script.append("ln -s /etc/shadow /tmp/s; echo \"link $(cat /tmp/s 2>/dev/null | wc -c)\";")
                .append(" test -s /etc/os-release && echo os-release=ok; ls -A /etc | wc -l");
        Fixture.Run r = f.run(script.toString());
        for (Path p : masked) {
            String kind = Files.isDirectory(p) ? "dir" : "file";
            assertThat(r.out()).as(r.err()).contains(p + " " + kind + " 0\n");
        }
        assertThat(r.out()).contains("link 0\n", "os-release=ok");
        java.util.Set<String> hostEntries = new java.util.HashSet<>(List.of("resolv.conf", "hosts", "passwd", "group"));
        try (var list = Files.list(Path.of("/etc"))) {
            list.forEach(p -> hostEntries.add(p.getFileName().toString()));
        }
        String[] lines = r.out().strip().split("\n");
        assertThat(Long.parseLong(lines[lines.length - 1].strip())).as("every /etc entry is there, masked or not")
                .isEqualTo(hostEntries.size());
    }

    @Test
    void debiansMavenStartsInside(Fixture f) throws Exception {
        Path mvn = Path.of("/usr/bin/mvn");
        Prerequisites.require("Debian's maven (/usr/bin/mvn)", Files.isExecutable(mvn), "apt-get install maven");
        Fixture.Run r = f.run("/usr/bin/mvn --version; echo exit=$?");
        assertThat(r.out()).as(r.err()).contains("Apache Maven", "exit=0");
    }

    @Test
    void aToolInTheCallersHomeRunsInsideAndTheHomesSecretsStayHidden(Fixture f) throws Exception {
        Path bin = Files.createDirectories(f.home.resolve(".local/bin"));
        Path tool = Files.writeString(bin.resolve("hello-tool"), "#!/bin/sh\necho hello from a home tool\n");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
        String path = bin + ":" + f.home + ":" + f.home.resolve(".ssh") + ":/usr/bin:/bin";
        SandboxSpec spec = f.spec("hello-tool; echo \"PATH=$PATH\"; test -e ~/.ssh/id_ed25519 && echo key-visible;"
                + " touch " + bin + "/planted; echo touch=$?").hostEnv(Map.of("PATH", path)).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err()).contains("hello from a home tool", "PATH=" + bin + ":/usr/bin:/bin:", "touch=1")
                .doesNotContain("key-visible");
        assertThat(r.err()).contains("sallyport sandbox: shown read-only from the home folder for the tools on PATH: "
                        + bin + " (--allow-read FOLDER shows more)",
                "sallyport sandbox: PATH entry " + f.home + " is not shown: it is the home folder",
                "sallyport sandbox: PATH entry " + f.home.resolve(".ssh") + " is not shown: it lies in ");
        assertThat(bin.resolve("planted")).doesNotExist();
    }

    @Test
    void theCallersPython3RunsInsideWithTheCallersPath(Fixture f) throws Exception {
        // On the development machine root's python3 is pyenv's, in /root/.pyenv: shown through its PATH entry.
        String expected = f.host("python3", "--version").strip();
        Path home = Path.of(System.getProperty("user.home"));
        SandboxSpec spec = SandboxSpec.builder(List.of("python3", "--version"), f.workspace, f.proxy.getAddress(),
                f.caPem).hostHome(home).hostEnv(System.getenv()).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out().strip()).isEqualTo(expected);
        String callerPath = System.getenv().getOrDefault("PATH", "");
        boolean fromHome = java.util.Arrays.stream(callerPath.split(":")).filter(d -> d.startsWith("/"))
                .map(d -> Path.of(d, "python3")).filter(Files::isExecutable).findFirst()
                .map(p -> p.startsWith(home)).orElse(false);
        if (fromHome) {
            assertThat(r.err()).contains("sallyport sandbox: shown read-only from the home folder");
        }
    }

    @Test
    void gitCommitsWithTheHostsIdentityAndSeesNoOtherKeyOfItsConfig(Fixture f) throws Exception {
        Files.writeString(f.home.resolve(".gitconfig"), """
                [user]
                	name = Ann Example
                	email = ann@example.com
                [credential]
                	helper = store --file /home/ann/.git-credentials
                [url "https://mirror.example.com/"]
                	insteadOf = https://code.example.com/
                [alias]
                	pwn = !echo run
                """);
        f.host("git", "init", "-q");
        SandboxSpec spec = f.spec("git commit -q --allow-empty -m inside && git log -1 --format='%an <%ae> / %cn <%ce>';"
                + " git config --global --list; git config --global core.pager cat; echo global=$?").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err())
                .contains("Ann Example <ann@example.com> / Ann Example <ann@example.com>\n",
                        "user.name=Ann Example\nuser.email=ann@example.com\n", "global=0")
                .doesNotContainIgnoringCase("credential").doesNotContainIgnoringCase("insteadof")
                .doesNotContain("alias").doesNotContain("mirror.example.com");
        assertThat(f.host("git", "log", "-1", "--format=%an")).isEqualTo("Ann Example\n");
        assertThat(Files.readString(f.home.resolve(".gitconfig"))).doesNotContain("pager");
    }

    @Test
    void gitIsWritableByDefaultAndTheStrictModeSaysOnceThatItIsReadOnly(Fixture f) throws Exception {
        Fixture.Run plain = f.run(f.spec("echo plain").gitWritable(false).build(), new byte[0]);
        assertThat(plain.err()).as("a folder that is not a checkout (its .git mask is made by the run)")
                .doesNotContain("is read-only inside");
        f.host("git", "init", "-q");
        Fixture.Run r = f.run(f.spec("touch .git/FETCH_HEAD; echo touch=$?").gitWritable(false).build(), new byte[0]);
        assertThat(r.out()).contains("touch=1");
        assertThat(r.err()).contains("sallyport sandbox: " + f.workspace.resolve(".git") + " is read-only inside, as "
                + "asked (--git-read-only or the policy's sandbox.git: read-only): git commit, fetch, pull and checkout "
                + "fail with 'Read-only file system'");

        Fixture.Run writable = f.run("touch .git/FETCH_HEAD; echo touch=$?; echo x >> .git/config; echo config=$?");
        assertThat(writable.out()).contains("touch=0", "config=2");
        assertThat(writable.err()).doesNotContain("is read-only inside");
    }

    @Test
    void packageCachesLastAcrossRunsOfOneWorkspaceAndNoOther(Fixture f) throws Exception {
        Path state = f.root.resolve("state");
        Fixture.Run first = f.run(f.spec("echo kept > ~/.m2/repository/marker && echo kept > ~/.npm/marker"
                + " && ls -d ~/.cache/pip ~/.cache/go-build ~/go/pkg/mod ~/.cargo/registry ~/.gradle/caches"
                + " && echo wrote").packageCaches(state).build(), new byte[0]);
        assertThat(first.out()).as(first.err()).contains("wrote");
        Path folder = PackageCaches.folder(state, f.workspace);
        assertThat(folder.resolve("m2-repository/marker")).hasContent("kept");
        assertThat(folder).startsWith(state.resolve("caches")).satisfies(p -> assertThat(p.startsWith(f.workspace))
                .isFalse());

        Fixture.Run second = f.run(f.spec("cat ~/.m2/repository/marker ~/.npm/marker").packageCaches(state).build(),
                new byte[0]);
        assertThat(second.out()).as(second.err()).isEqualTo("kept\nkept\n");

        Path other = Files.createDirectories(f.root.resolve("other-ws"));
        Fixture.Run elsewhere = f.run(SandboxSpec.builder(List.of("/bin/sh", "-c",
                        "ls -A ~/.m2/repository ~/.npm | grep -c marker"), other, f.proxy.getAddress(), f.caPem)
                .hostHome(f.home).packageCaches(state).build(), new byte[0]);
        assertThat(elsewhere.out().strip()).as(elsewhere.err()).isEqualTo("0");
        assertThat(PackageCaches.folder(state, other)).isNotEqualTo(folder);

        Fixture.Run without = f.run("test -e ~/.m2/repository/marker || echo empty");
        assertThat(without.out()).isEqualTo("empty\n");
    }
}
