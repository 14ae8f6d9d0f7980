package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.Prerequisites;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UserIdsTest {

    @Test
    void sudoCallerWins(@TempDir Path workspace) throws Exception {
        assertThat(UserIds.caller(workspace, Map.of("SUDO_UID", "1000", "SUDO_GID", "1001")))
                .isEqualTo(new UserIds(1000, 1001));
    }

    @Test
    void otherwiseTheWorkspaceOwner(@TempDir Path workspace) throws Exception {
        if (Prerequisites.isRoot()) {
            Files.setAttribute(workspace, "unix:uid", 1234);
            Files.setAttribute(workspace, "unix:gid", 1235);
        }
        int uid = (Integer) Files.getAttribute(workspace, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(workspace, "unix:gid", LinkOption.NOFOLLOW_LINKS);

        assertThat(UserIds.caller(workspace, Map.of("SUDO_UID", "x; rm", "SUDO_GID", "1")))
                .isEqualTo(new UserIds(uid, gid));
        assertThat(UserIds.caller(workspace, Map.of()).toString()).isEqualTo(uid + ":" + gid);
    }

    @Test
    void aRootOwnedWorkspaceWithoutSudoIsRefusedRatherThanRunAsRoot(@TempDir Path workspace) throws Exception {
        Prerequisites.requireRoot("a root-owned workspace");

        assertThatThrownBy(() -> UserIds.caller(workspace, Map.of()))
                .hasMessage("workspace: " + workspace + " belongs to 0:0 and sallyport was not started through sudo "
                        + "by another user (expected: a workspace owned by an unprivileged user, or sudo from that "
                        + "user: the workload never runs as root in the guest)");
        assertThatThrownBy(() -> UserIds.caller(workspace, Map.of("SUDO_UID", "0", "SUDO_GID", "0")))
                .hasMessageContaining("belongs to 0:0");
    }

    @Test
    void aSpecForRootIsRefused() {
        assertThatThrownBy(() -> NerdctlSpec.of(NerdctlCommandTest.NETWORK, VmRuntime.KATA, "debian:12",
                List.of("sh"), Path.of("/home/ann/project"), new UserIds(1000, 0), Path.of("/run/b.pem")))
                .hasMessage("user: 1000:0 (expected: a uid and gid other than 0; root in the guest could leave "
                        + "setuid-root programs in the host workspace)");
    }
}
