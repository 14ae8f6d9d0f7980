package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.sandbox.internal.ScratchMounts;
import dev.sallyport.sandbox.internal.WorkloadUser;
import dev.sallyport.testing.Prerequisites;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scratch folders in a real sandbox: a host folder under the home (a tool's config folder) is shown with its files
 * and writable inside, and after the run the host folder is byte for byte what it was and nothing the command wrote
 * is anywhere on the host; through the overlay where bwrap (0.9+) and the kernel make one for this user, else (and
 * always with {@link ScratchMounts.Choice#COPY}) through a copy.
 */
@Timeout(180)
@ExtendWith(Fixture.Extension.class)
class SandboxScratchTest {

    @ParameterizedTest
    @EnumSource(ScratchMounts.Choice.class)
    void theHostFilesAreReadableNewAndChangedFilesWritableAndTheHostFolderUnchangedAfter(ScratchMounts.Choice choice,
                                                                                         Fixture f) throws Exception {
        Path config = Files.createDirectories(f.home.resolve(".config/opencode"));
        Files.writeString(config.resolve("opencode.json"), "{\"theme\": \"host\"}\n");
        Files.createDirectories(config.resolve("agents"));
        Files.writeString(config.resolve("agents/review.md"), "host agent\n");
        Files.createSymbolicLink(config.resolve("key"), f.home.resolve(".ssh/id_ed25519"));
        String before = hash(config);
        String marker = "planted-" + UUID.randomUUID();
        String script = String.join("; ",
                "cd " + config,
                "echo \"read=$(cat opencode.json)\"",
                "echo \"agent=$(cat agents/review.md)\"",
                "echo '{\"theme\": \"sandbox\"}' > opencode.json && echo changed=ok",
                "echo '*' > .gitignore && echo created=ok",
                "mkdir -p " + marker + "/deep && echo x > " + marker + "/deep/" + marker + " && echo mkdir=ok",
                "rm agents/review.md && echo removed=ok",
                "echo pwned > key 2>/dev/null; echo \"through-link=$?\"",
                "echo \"now=$(cat opencode.json) $(cat .gitignore)\"",
                "awk -v s=" + config + " '$5 == s { print \"root=\" $4 }' /proc/self/mountinfo");
        Fixture.Run r = run(f.spec(script).scratch(config).build(), choice);
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).as(r.err()).contains("read={\"theme\": \"host\"}", "agent=host agent", "changed=ok",
                "created=ok", "mkdir=ok", "removed=ok", "now={\"theme\": \"sandbox\"} *")
                .doesNotContain("through-link=0");
        String root = r.out().lines().filter(l -> l.startsWith("root=")).findFirst().orElseThrow();
        if (expectsOverlay(choice)) {
            assertThat(root).isEqualTo("root=/");
        } else {
            assertThat(root).endsWith("/scratch-0");
        }
        assertThat(hash(config)).as("the host folder after the run").isEqualTo(before);
        assertThat(Files.readString(f.home.resolve(".ssh/id_ed25519"))).isEqualTo("FAKE-PRIVATE-KEY\n");
        assertThat(named(marker, f.root, Path.of(System.getProperty("java.io.tmpdir"))))
                .as("what the command wrote, anywhere on the host").isEmpty();
    }

    @Test
    void aScratchPathThroughALinkShowsTheRealFolderAtThePathGivenAndALinkIntoTheWorkspaceIsRefused(Fixture f)
            throws Exception {
        Path real = Files.createDirectories(f.home.resolve("dotfiles/tool"));
        Files.writeString(real.resolve("settings"), "from dotfiles\n");
        Path link = Files.createSymbolicLink(Files.createDirectories(f.home.resolve(".config")).resolve("tool"), real);
        String before = hash(real);
        Fixture.Run r = f.run(f.spec("cat " + link + "/settings && echo new > " + link + "/settings && cat " + link
                + "/settings").scratch(link).build(), new byte[0]);
        assertThat(r.out()).as(r.err()).isEqualTo("from dotfiles\nnew\n");
        assertThat(hash(real)).isEqualTo(before);

        Path inWorkspace = Files.createDirectories(f.workspace.resolve("sub"));
        Path intoWorkspace = Files.createSymbolicLink(f.home.resolve(".config/ws"), inWorkspace);
        assertThatThrownBy(() -> ProcessSandbox.start(f.spec("true").scratch(intoWorkspace).build(), Stdio.pipes()))
                .isInstanceOf(SandboxException.class).hasMessage("scratch " + intoWorkspace + ": (the link to "
                        + inWorkspace.toRealPath() + ") lies in the workspace " + f.workspace + " (expected: a folder "
                        + "apart from the workspace, the writable grants and sallyport's own folders)");
    }

    @Test
    void aCopyLargerThanTheTmpfsIsRefusedInOneLineAndLeavesNothingBehind(Fixture f) throws Exception {
        Path big = Files.createDirectories(f.home.resolve(".config/big"));
        Files.write(big.resolve("blob"), new byte[2 << 20]);
        SandboxSpec spec = f.spec("true").scratch(big).limits(ResourceLimits.defaults().withTmpfs(1 << 20)).build();
        assertThatThrownBy(() -> ProcessSandbox.start(spec, Stdio.pipes(), Integer.MAX_VALUE,
                ScratchMounts.Choice.COPY)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("scratch " + big.toRealPath() + ": more than 1048576 bytes to copy (expected: at "
                        + "most the tmpfs size, --tmpfs-size, in all scratch folders;")
                .hasMessageNotContaining("\n");
    }

    /** Whether {@code choice} should have made an overlay for this test's folders on this host. */
    private static boolean expectsOverlay(ScratchMounts.Choice choice) throws IOException, SandboxException {
        if (choice == ScratchMounts.Choice.COPY || Prerequisites.isRoot()) {
            return false;   // root's command runs as another uid, which does not own the fixture's home: a copy
        }
        int uid = (int) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        int gid = (int) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
        return ScratchMounts.overlayWorks(BubblewrapProbe.require(), List.of(), new WorkloadUser.Caller(uid, gid));
    }

    private static Fixture.Run run(SandboxSpec spec, ScratchMounts.Choice choice) throws Exception {
        try (SandboxSession session = new SandboxSession(ProcessSandbox.start(spec, Stdio.pipes(), Integer.MAX_VALUE,
                choice))) {
            return session.finish();
        }
    }

    /** A hash of every entry under {@code dir}: its relative path, kind, mode, and bytes or link target. */
    static String hash(Path dir) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        List<Path> entries = new ArrayList<>();
        try (var walk = Files.walk(dir)) {
            walk.sorted().forEach(entries::add);
        }
        for (Path p : entries) {
            String mode = java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
            sha.update((dir.relativize(p) + "\0" + mode + "\0").getBytes(StandardCharsets.UTF_8));
            if (Files.isSymbolicLink(p)) {
                sha.update(("link:" + Files.readSymbolicLink(p)).getBytes(StandardCharsets.UTF_8));
            } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                sha.update(Files.readAllBytes(p));
            } else {
                sha.update("dir".getBytes(StandardCharsets.UTF_8));
            }
            sha.update((byte) 0);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** Every path named {@code name} under {@code roots} (unreadable folders skipped). */
    private static List<Path> named(String name, Path... roots) throws IOException {
        List<Path> found = new ArrayList<>();
        for (Path root : roots) {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.getFileName() != null && dir.getFileName().toString().equals(name)) {
                        found.add(dir);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (file.getFileName().toString().equals(name)) {
                        found.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        return found;
    }
}
