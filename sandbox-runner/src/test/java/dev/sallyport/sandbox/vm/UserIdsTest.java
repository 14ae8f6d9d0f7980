package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
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
        int uid = (Integer) Files.getAttribute(workspace, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(workspace, "unix:gid", LinkOption.NOFOLLOW_LINKS);

        assertThat(UserIds.caller(workspace, Map.of("SUDO_UID", "x; rm", "SUDO_GID", "1")))
                .isEqualTo(new UserIds(uid, gid));
        assertThat(UserIds.caller(workspace, Map.of()).toString()).isEqualTo(uid + ":" + gid);
    }
}
