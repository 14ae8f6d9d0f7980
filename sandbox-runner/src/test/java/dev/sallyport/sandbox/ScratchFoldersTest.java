package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link ScratchFolders#check} refuses, each in one line naming the flag, and what it resolves. */
class ScratchFoldersTest {
    private static final String APART = " (expected: a folder apart from the workspace, the writable grants and "
            + "sallyport's own folders)";

    @TempDir
    Path dir;

    @Test
    void aMissingPathOrAFileIsRefused() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("ws"));
        Path home = Files.createDirectories(dir.resolve("home"));
        Path state = home.resolve(".local/share/sallyport");
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", home.resolve("nope"), ws, home, state))
                .hasMessage("--scratch " + home.resolve("nope") + ": does not exist (expected: an existing folder)");
        Path file = Files.writeString(home.resolve("file"), "x");
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", file, ws, home, state))
                .hasMessage("--scratch " + file + ": is not a folder (expected: a folder; --allow-read shows a file)");
    }

    @Test
    void theWorkspaceWhatHoldsItWhatLiesInItAndTheStateFolderAreRefused() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("projects/ws"));
        Path home = Files.createDirectories(dir.resolve("home"));
        Path state = Files.createDirectories(home.resolve(".local/share/sallyport"));
        Path sub = Files.createDirectories(ws.resolve("sub"));
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", ws, ws, home, state))
                .hasMessage("--scratch " + ws + ": is the workspace " + ws + APART);
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", dir.resolve("projects"), ws, home, state))
                .hasMessage("--scratch " + dir.resolve("projects") + ": holds the workspace " + ws + APART);
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", sub, ws, home, state))
                .hasMessage("--scratch " + sub + ": lies in the workspace " + ws + APART);
        assertThatThrownBy(() -> ScratchFolders.check("sandbox.scratch", home.resolve(".local"), ws, home, state))
                .hasMessage("sandbox.scratch " + home.resolve(".local") + ": holds sallyport's state folder " + state
                        + APART);
        Path keys = Files.createDirectories(state.resolve("ca"));
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", keys, ws, home, state))
                .hasMessage("--scratch " + keys + ": lies in sallyport's state folder " + state + APART);
    }

    @Test
    void theRootTheHomeAndKernelFoldersAreRefused() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("ws"));
        Path home = Files.createDirectories(dir.resolve("home"));
        Path state = home.resolve(".local/share/sallyport");
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", Path.of("/"), ws, home, state))
                .hasMessage("--scratch /: is the root folder (expected: one folder of the host)");
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", home, ws, home, state))
                .hasMessage("--scratch " + home + ": holds the home folder " + home + " (expected: a folder in the "
                        + "home or elsewhere; the home inside is an empty tmpfs)");
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", Path.of("/proc/self"), ws, home, state))
                .hasMessageContaining("lies in /proc (expected: a folder of files, not of a kernel file system)");
    }

    @Test
    void aLinkIsCheckedAsTheFolderItLeadsToAndShownAtThePathGiven() throws Exception {
        Path ws = Files.createDirectories(dir.resolve("ws"));
        Path home = Files.createDirectories(dir.resolve("home"));
        Path state = Files.createDirectories(home.resolve(".local/share/sallyport"));
        Path real = Files.createDirectories(home.resolve("dotfiles/opencode"));
        Path link = Files.createSymbolicLink(Files.createDirectories(home.resolve(".config")).resolve("opencode"), real);
        assertThat(ScratchFolders.check("--scratch", link, ws, home, state))
                .isEqualTo(new ScratchFolders.Checked(real.toRealPath(), link));
        Path toState = Files.createSymbolicLink(home.resolve(".config/state"), state);
        assertThatThrownBy(() -> ScratchFolders.check("--scratch", toState, ws, home, state))
                .hasMessage("--scratch " + toState + ": (the link to " + state.toRealPath() + ") is sallyport's state "
                        + "folder " + state + APART);
    }
}
