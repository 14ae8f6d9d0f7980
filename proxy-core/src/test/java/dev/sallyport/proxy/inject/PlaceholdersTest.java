package dev.sallyport.proxy.inject;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.PolicyLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlaceholdersTest {

    @TempDir
    Path state;

    private static final String POLICY = """
            secrets:
              - name: GITHUB_TOKEN
                from: env:GITHUB_TOKEN
                hosts: [api.example.com]
                headers: [Authorization]
              - name: FIXED
                from: env:FIXED
                hosts: [api.example.com]
                headers: [X-Api-Key]
                placeholder: my-own-placeholder-1
              - name: NPM_TOKEN
                from: file:/run/secrets/npm
                hosts: [registry.example.com]
                headers: [Authorization]
            """;

    @Test
    void derivedPlaceholdersLookRightAndAreStableAcrossProcesses() throws Exception {
        var policy = PolicyLoader.parse(POLICY, "p.yaml");
        Map<String, String> first = Placeholders.forPolicy(policy, state);
        Map<String, String> second = Placeholders.forPolicy(policy, state);   // a second "process"
        assertThat(first).isEqualTo(second);
        assertThat(first.keySet()).containsExactly("GITHUB_TOKEN", "FIXED", "NPM_TOKEN");
        assertThat(first.get("GITHUB_TOKEN")).matches("sallyport-ph-[a-z2-7]{26}");
        assertThat(first.get("NPM_TOKEN")).matches("sallyport-ph-[a-z2-7]{26}").isNotEqualTo(first.get("GITHUB_TOKEN"));
        assertThat(first.get("FIXED")).isEqualTo("my-own-placeholder-1");
    }

    @Test
    void keyFileIsPrivateAndNeverOverwritten() throws Exception {
        Path key = state.resolve("sub").resolve(Placeholders.KEY_FILE);
        Placeholders.fromStateDirectory(key.getParent());
        assertThat(Files.size(key)).isEqualTo(32);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key))).isEqualTo("rw-------");
        byte[] before = Files.readAllBytes(key);
        Placeholders.fromStateDirectory(key.getParent());
        assertThat(Files.readAllBytes(key)).isEqualTo(before);
        try (var files = Files.list(key.getParent())) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(Placeholders.KEY_FILE);
        }
    }

    @Test
    void concurrentFirstUseAgreesOnOneKey() throws Exception {
        Path dir = state.resolve("race");
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
            var start = new java.util.concurrent.CountDownLatch(1);
            var results = new java.util.ArrayList<java.util.concurrent.Future<String>>();
            for (int i = 0; i < 8; i++) {
                results.add(pool.submit(() -> {
                    start.await();
                    return Placeholders.fromStateDirectory(dir).derive("A");
                }));
            }
            start.countDown();
            var distinct = new java.util.HashSet<String>();
            for (var f : results) {
                distinct.add(f.get(30, java.util.concurrent.TimeUnit.SECONDS));
            }
            assertThat(distinct).hasSize(1);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
    }

    @Test
    void differentKeysGiveDifferentPlaceholders() {
        assertThat(Placeholders.ephemeral().derive("A")).isNotEqualTo(Placeholders.ephemeral().derive("A"));
        Placeholders p = Placeholders.withKey(Fixtures.KEY);
        assertThat(p.derive("A")).isEqualTo(Placeholders.withKey(Fixtures.KEY).derive("A")).isNotEqualTo(p.derive("B"));
    }

    @Test
    void brokenKeyFileIsAClearError() throws Exception {
        Files.write(state.resolve(Placeholders.KEY_FILE), new byte[31]);
        assertThatThrownBy(() -> Placeholders.fromStateDirectory(state)).isInstanceOf(IOException.class)
                .hasMessageContaining("placeholder.key: 31 bytes (expected: 32;");
    }

    @Test
    void aStateFolderThatCannotBeMadeIsOneLineNamingTheKeyAndTheVariable() throws Exception {
        Path notAFolder = Files.writeString(state.resolve("a-file"), "x");
        Path inside = notAFolder.resolve("state");
        assertThatThrownBy(() -> Placeholders.fromStateDirectory(inside)).isInstanceOf(IOException.class)
                .hasMessageStartingWith(inside.resolve(Placeholders.KEY_FILE) + ": cannot create or read the placeholder key: ")
                .hasMessageContaining("$SALLYPORT_HOME").hasMessageNotContaining("\n");
        assertThatThrownBy(() -> Placeholders.deferred(inside).derive("A")).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot create or read the placeholder key");
    }

    @Test
    void deferredKeyIsReadOnFirstUseOnly() throws Exception {
        Placeholders deferred = Placeholders.deferred(state);
        SecretStore none = SecretStore.load(java.util.List.of(), deferred, k -> null, java.time.InstantSource.system());
        assertThat(none.isEmpty()).isTrue();
        assertThat(Files.exists(state.resolve(Placeholders.KEY_FILE))).isFalse();
        assertThat(deferred.derive("A")).isEqualTo(Placeholders.fromStateDirectory(state).derive("A"));
    }

    @Test
    void unreadableDeferredKeyIsALoadProblem() throws Exception {
        Path bad = Files.createDirectories(state.resolve("bad"));
        Files.write(bad.resolve(Placeholders.KEY_FILE), new byte[3]);
        assertThatThrownBy(() -> SecretStore.load(java.util.List.of(Fixtures.env("A", java.util.List.of("a.example.com"),
                java.util.List.of("Authorization"))), Placeholders.deferred(bad), k -> "aaaaaaaaaa", java.time.InstantSource.system()))
                .isInstanceOf(SecretLoadException.class)
                .hasMessageStartingWith("secrets[0] A: placeholder key: " + bad.resolve(Placeholders.KEY_FILE) + ": 3 bytes");
    }

    @Test
    void noSecretsNeedsNoKey() throws Exception {
        assertThat(Placeholders.forPolicy(PolicyLoader.parse("mode: enforce\n", "p.yaml"), state)).isEmpty();
        assertThat(Files.exists(state.resolve(Placeholders.KEY_FILE))).isFalse();
    }
}
