package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a scratch folder's copy may hold when the runner hands it to another user than itself. */
class ScratchMountsTest {
    @TempDir
    Path dir;

    @Test
    void aCopyForADroppedUserHoldsOnlyWhatThatUserCouldReadOnTheHost() throws Exception {
        int me = (Integer) Files.getAttribute(dir, "unix:uid");
        int myGroup = (Integer) Files.getAttribute(dir, "unix:gid");
        Path secret = Files.writeString(dir.resolve("secret"), "x");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Path shared = Files.writeString(dir.resolve("shared"), "x");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-r--r--"));
        Path groupOnly = Files.writeString(dir.resolve("group"), "x");
        Files.setPosixFilePermissions(groupOnly, PosixFilePermissions.fromString("rw-r-----"));
        Path closed = Files.createDirectory(dir.resolve("closed"));
        Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("rwxr--r--"));
        WorkloadUser other = new WorkloadUser.Dropped(me + 4242, myGroup + 4242, WorkloadUser.Why.DEDICATED);
        WorkloadUser sameGroup = new WorkloadUser.Dropped(me + 4242, myGroup, WorkloadUser.Why.DEDICATED);
        assertThat(ScratchMounts.readableBy(other, secret, false)).isFalse();
        assertThat(ScratchMounts.readableBy(other, shared, false)).isTrue();
        assertThat(ScratchMounts.readableBy(other, groupOnly, false)).isFalse();
        assertThat(ScratchMounts.readableBy(sameGroup, groupOnly, false)).isTrue();
        assertThat(ScratchMounts.readableBy(other, closed, true)).as("a folder it cannot enter").isFalse();
        assertThat(ScratchMounts.readableBy(new WorkloadUser.Dropped(me == 0 ? 1 : me, myGroup,
                WorkloadUser.Why.DEDICATED), secret, false)).as("its owner").isEqualTo(me != 0);
    }
}
