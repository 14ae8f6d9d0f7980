package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walk of the grants for host services' socket files, with its record in the start-up cache: a socket file that
 * appears after a walk was recorded, however it gets there, is found by the next run; only an unchanged tree is
 * answered from the record.
 */
class HostSocketsTest {
    /** The walk's clock, ahead of the folders this test has just made: as if they had been made long before. */
    private static final InstantSource LATER = InstantSource.offset(InstantSource.system(), Duration.ofMinutes(1));

    @Test
    void anUnchangedTreeIsAnsweredFromTheRecord(@TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path door = bind(grant.resolve("a/b/door.sock"));
        Path cache = dir.resolve("cache");
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER)).containsExactly(door);
        assertThat(cache.resolve(GrantsWalkRecord.FILE)).isRegularFile();
        assertThat(Files.getPosixFilePermissions(cache).toString()).isEqualTo("[OWNER_READ, OWNER_WRITE, OWNER_EXECUTE]");
        assertThat(GrantsWalkRecord.recall(cache, List.of(grant))).contains(List.of(door));
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER)).containsExactly(door);
    }

    @Test
    void aSocketBoundDeepInTheTreeAfterTheRecordIsFound(@TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path cache = recorded(grant, dir);
        Path late = bind(grant.resolve("a/b/c/late.sock"));
        assertThat(GrantsWalkRecord.recall(cache, List.of(grant))).isEmpty();
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER)).containsExactly(late);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a/b/c/x", "a/b/c"})   // under a new name; in the place of a folder it replaces
    void aFolderMovedInWithASocketIsFound(String target, @TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path cache = recorded(grant, dir);
        bind(Files.createDirectories(dir.resolve("elsewhere/y")).resolve("door.sock"));
        Files.deleteIfExists(grant.resolve(target));
        Files.move(dir.resolve("elsewhere"), grant.resolve(target));
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER))
                .containsExactly(grant.resolve(target).resolve("y/door.sock"));
    }

    @Test
    void aWalkOfFoldersChangedJustBeforeItIsNotRecorded(@TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path cache = dir.resolve("cache");
        // the clock's own time: the folders changed within the clock's granularity of the walk
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), InstantSource.system())).isEmpty();
        assertThat(cache.resolve(GrantsWalkRecord.FILE)).doesNotExist();
    }

    @Test
    void aDamagedOrForeignRecordMeansAWalk(@TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path other = tree(dir.resolve("other"));
        Path cache = recorded(grant, dir);
        assertThat(GrantsWalkRecord.recall(cache, List.of(grant, other))).isEmpty();
        assertThat(GrantsWalkRecord.recall(cache, List.of(other))).isEmpty();
        Path file = cache.resolve(GrantsWalkRecord.FILE);
        byte[] whole = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(whole, whole.length - 1));   // cut short
        assertThat(GrantsWalkRecord.recall(cache, List.of(grant))).isEmpty();
        byte[] changed = whole.clone();
        changed[changed.length / 2] ^= 0x01;
        Files.write(file, changed);
        Path door = bind(grant.resolve("a/door.sock"));
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER)).containsExactly(door);
    }

    @Test
    void withoutACacheOrWithAFileGrantEveryRunWalks(@TempDir Path dir) throws Exception {
        Path grant = tree(dir.resolve("tools"));
        Path door = bind(grant.resolve("a/door.sock"));
        Path file = Files.writeString(dir.resolve("notes.txt"), "x");
        Path cache = dir.resolve("cache");
        assertThat(HostSockets.find(List.of(grant), Optional.empty(), LATER)).containsExactly(door);
        assertThat(HostSockets.find(List.of(grant, file), Optional.of(cache), LATER)).containsExactly(door);
        assertThat(cache).doesNotExist();
    }

    /** The cache folder (in {@code dir}) after a recorded walk of {@code grant}, which found no socket file. */
    private static Path recorded(Path grant, Path dir) throws Exception {
        Path cache = dir.resolve("cache");
        assertThat(HostSockets.find(List.of(grant), Optional.of(cache), LATER)).isEmpty();
        assertThat(GrantsWalkRecord.recall(cache, List.of(grant))).contains(List.of());
        return cache;
    }

    /** {@code root} with a few levels of folders and files (a tool folder in small). */
    private static Path tree(Path root) throws IOException {
        Files.createDirectories(root.resolve("a/b/c"));
        Files.createDirectories(root.resolve("a/d"));
        Files.createDirectories(root.resolve("e"));
        Files.writeString(root.resolve("a/b/tool"), "#!/bin/sh\n");
        Files.writeString(root.resolve("e/lib.so"), "");
        return root;
    }

    /** A socket file at {@code path}, as a host service leaves it (bound; the file stays after its listener). */
    private static Path bind(Path path) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(path));
        }
        return path;
    }
}
