package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Prerequisites;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who the command is on the host and what it learns about the host's users. Started by root, the command never
 * runs as root (owner rights survive dropped capabilities): it runs as sudo's caller, else the workspace's owner,
 * else a uid of its own with the workspace still writable, and says which in one line. Started by a normal user,
 * it runs as that user. Either way {@code /etc/passwd} names root, that user and nobody, not the host's accounts.
 */
@Timeout(120)
class SandboxIdentityTest {
    static final String ATTACK = "id -u; id -g; cat " + "%s" + " && echo SECRET-READ; echo made > created.txt;"
            + " echo more >> roots.txt && echo appended";

    @TempDir
    Path tmp;
    Fixture f;
    Path secret;

    @BeforeEach
    void setUp() throws Exception {
        // Folders the command's uid can pass through (JUnit makes its temporary folder 0700).
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        f = new Fixture(tmp);
        Path grant = Files.createDirectories(tmp.resolve("tool"));
        secret = Files.writeString(grant.resolve("token"), "root-only-token\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(f.workspace.resolve("roots.txt"), "existing\n");
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    private Fixture.Run attack(SandboxSpec.Builder spec) throws Exception {
        return f.run(spec.readOnly(secret.getParent()).build(), new byte[0]);
    }

    @Test
    void rootsCommandRunsAsAUidOfItsOwnAndTheRootOwnedWorkspaceStaysWritable() throws Exception {
        Prerequisites.requireRoot("a root runner's case");
        Fixture.Run r = attack(f.spec(ATTACK.formatted(secret)));
        assertThat(r.out()).startsWith("65533\n65533\n").contains("appended").doesNotContain("SECRET-READ")
                .doesNotContain("root-only-token");
        assertThat(r.err()).contains("Permission denied", "sallyport sandbox: started as root: the command runs as "
                + "uid 65533 gid 65533 (a uid of its own");
        // Through the idmapped workspace, what the command writes stays root's, like the workspace.
        assertThat(owner(f.workspace.resolve("created.txt"))).isZero();
        assertThat(f.workspace.resolve("roots.txt")).hasContent("existing\nmore");
    }

    @Test
    void rootsCommandStartedWithSudoRunsAsSudosCallerAndWritesItsFiles() throws Exception {
        Prerequisites.requireRoot("a root runner's case");
        chown(f.workspace, 4242);
        Fixture.Run r = attack(f.spec(ATTACK.formatted(secret)).hostEnv(Map.of("SUDO_UID", "4242", "SUDO_GID", "4242")));
        assertThat(r.out()).startsWith("4242\n4242\n").doesNotContain("SECRET-READ");
        assertThat(r.err()).contains("runs as uid 4242 gid 4242 (SUDO_UID/SUDO_GID: sudo's caller)");
        assertThat(owner(f.workspace.resolve("created.txt"))).isEqualTo(4242);
    }

    @Test
    void rootsCommandWithoutSudoRunsAsTheWorkspacesOwner() throws Exception {
        Prerequisites.requireRoot("a root runner's case");
        chown(f.workspace, 4343);
        Fixture.Run r = attack(f.spec(ATTACK.formatted(secret)));
        assertThat(r.out()).startsWith("4343\n4343\n").contains("appended").doesNotContain("SECRET-READ");
        assertThat(r.err()).contains("runs as uid 4343 gid 4343 (the workspace's owner)");
        assertThat(owner(f.workspace.resolve("created.txt"))).isEqualTo(4343);
    }

    @Test
    void aNormalUsersCommandRunsAsThatUserAndSaysNothingAboutIt() throws Exception {
        Prerequisites.requireNormalUser("a normal runner's case");
        int me = owner(tmp);
        Fixture.Run r = attack(f.spec(ATTACK.formatted(secret)));
        assertThat(r.out()).startsWith(me + "\n").contains("SECRET-READ", "appended");   // the user's own file
        assertThat(r.err()).doesNotContain("started as root");
        assertThat(owner(f.workspace.resolve("created.txt"))).isEqualTo(me);
    }

    /**
     * The host connects the command's unix sockets for it (the connect supervisor): a server inside that checks
     * its client's uid (tmux, ssh-agent, D-Bus do) still sees the command's own uid, not the host's.
     */
    @Test
    void aServerInsideSeesItsClientAsTheCommandsUser() throws Exception {
        f.script("peer.py", """
                import os, socket, struct
                server = socket.socket(socket.AF_UNIX)
                server.bind("peer.sock")
                server.listen(1)
                client = socket.socket(socket.AF_UNIX)
                client.connect("peer.sock")
                conn, _ = server.accept()
                pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
                print("me", os.getuid(), os.getgid(), "peer", uid, gid)
                """);
        Fixture.Run r = f.run("python3 peer.py");
        assertThat(r.out()).as(r.err()).matches("me (\\d+) (\\d+) peer \\1 \\2\n");
    }

    @Test
    void passwdAndGroupNameOnlyRootTheCommandsUserAndNobody() throws Exception {
        Fixture.Run r = f.run("cat /etc/passwd; echo --; cat /etc/group; echo --; id -un; getent passwd $(id -u) | cut -d: -f6");
        String[] parts = r.out().split("--\n");
        assertThat(parts[0].lines()).hasSize(3).anySatisfy(l -> assertThat(l).startsWith("root:x:0:0:"))
                .anySatisfy(l -> assertThat(l).startsWith("nobody:x:65534:65534:"));
        assertThat(parts[1].lines()).hasSize(3);
        assertThat(parts[2].lines().toList()).hasSize(2).element(1).isEqualTo(f.home.toString());
        String hostPasswd = Files.readString(Path.of("/etc/passwd"));
        for (String line : hostPasswd.lines().toList()) {
            String name = line.split(":")[0];
            if (!name.equals("root") && !name.equals("nobody") && !name.equals(parts[2].lines().findFirst().orElse(""))) {
                assertThat(r.out()).as("host account " + name).doesNotContain(name + ":x:");
            }
        }
    }

    private static int owner(Path p) throws Exception {
        return (int) Files.getAttribute(p, "unix:uid");
    }

    private static void chown(Path p, int id) throws Exception {
        Files.setAttribute(p, "unix:uid", id);
        Files.setAttribute(p, "unix:gid", id);
        try (var files = Files.list(p)) {
            for (Path child : files.toList()) {
                Files.setAttribute(child, "unix:uid", id);
                Files.setAttribute(child, "unix:gid", id);
            }
        }
    }
}
