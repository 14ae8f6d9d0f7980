package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A host path is held by a writable folder however it is spelt: through a link, or before it exists. */
class WritableFoldersTest {

    @Test
    void aPathThroughALinkIntoTheWorkspaceIsHeldByIt(@TempDir Path dir) throws Exception {
        Path workspace = Files.createDirectory(dir.resolve("ws"));
        Path state = Files.createSymbolicLink(dir.resolve("state"),
                Files.createDirectory(workspace.resolve(".sallyport")));
        Path other = Files.createDirectory(dir.resolve("other"));
        // the cache folder under the link does not exist yet
        assertThat(WritableFolders.holding(state.resolve("startup"), List.of(other, workspace))).contains(workspace);
        assertThat(WritableFolders.holding(dir.resolve("elsewhere/startup"), List.of(other, workspace))).isEmpty();
        assertThat(WritableFolders.holding(workspace, List.of(workspace))).contains(workspace);
    }
}
