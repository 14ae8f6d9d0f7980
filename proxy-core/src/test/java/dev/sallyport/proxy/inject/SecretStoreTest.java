package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.env;
import static dev.sallyport.proxy.inject.Fixtures.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.proxy.inject.InjectionResult.Injected;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretStoreTest {

    @TempDir
    Path dir;

    private static HttpHeaders auth(String v) {
        return new DefaultHttpHeaders().add("Authorization", "Bearer " + v);
    }

    @Test
    void missingSourcesAreReportedTogetherWithoutValues() throws Exception {
        String present = Fixtures.token("ok_");
        Path tooShort = Files.writeString(dir.resolve("short"), "abc\n");
        assertThatThrownBy(() -> Fixtures.store(Map.of("PRESENT", present),
                env("PRESENT", List.of("a.example.com"), List.of("Authorization")),
                env("GITHUB_TOKEN", List.of("a.example.com"), List.of("Authorization")),
                spec("F", new SecretSource.File(dir.resolve("nope")), List.of("a.example.com"), List.of("Authorization"), null, false, false),
                spec("S", new SecretSource.File(tooShort), List.of("a.example.com"), List.of("Authorization"), null, false, false)))
                .isInstanceOf(SecretLoadException.class)
                .satisfies(e -> {
                    List<String> problems = ((SecretLoadException) e).problems();
                    assertThat(problems).containsExactly(
                            "secrets[1] GITHUB_TOKEN: environment variable GITHUB_TOKEN is not set"
                                    + " (expected: the variable set in the proxy's environment, or lazy: true)",
                            "secrets[2] F: file " + dir.resolve("nope") + " does not exist"
                                    + " (expected: a readable file holding the token, or lazy: true)",
                            "secrets[3] S: file " + tooShort + ": value has 3 bytes (expected: at least 8)");
                    assertThat(e.getMessage()).doesNotContain(present).doesNotContain("abc");
                });
    }

    @Test
    void controlCharactersAreRefusedWithoutShowingTheValue() {
        assertThatThrownBy(() -> Fixtures.store(Map.of("X", "abcdefgh\r\nInjected: yes"),
                env("X", List.of("a.example.com"), List.of("Authorization"))))
                .hasMessage("secrets[0] X: environment variable X: value has a control character at byte 8"
                        + " (expected: a single-line token without control characters)");
    }

    @Test
    void fileValuesLoseOneTrailingNewlineAndAreReReadOnReload() throws Exception {
        Path f = Files.writeString(dir.resolve("tok"), "first-value-1234\n");
        String yaml = """
                secrets:
                  - name: TOK
                    from: file:%s
                    hosts: [api.example.com]
                    headers: [Authorization]
                """.formatted(f);
        var policy = PolicyLoader.parse(yaml, "p.yaml");
        SecretStore store = SecretStore.load(policy, Placeholders.withKey(Fixtures.KEY));
        String ph = store.placeholders().get("TOK");
        HttpHeaders h = auth(ph);
        store.exchange("api.example.com").inject(h, "/");
        assertThat(h.get("Authorization")).isEqualTo("Bearer first-value-1234");

        Files.writeString(f, "second-value-5678\r\n");
        SecretStore reloaded = store.reload(policy);
        store.close();
        HttpHeaders h2 = auth(ph);
        reloaded.exchange("api.example.com").inject(h2, "/");
        assertThat(h2.get("Authorization")).isEqualTo("Bearer second-value-5678");
        assertThat(reloaded.placeholders().get("TOK")).isEqualTo(ph);
    }

    @Test
    void lazySecretIsRefusedUntilItAppears() throws Exception {
        Path f = dir.resolve("later");
        Fixtures.Clock clock = new Fixtures.Clock();
        SecretStore store = SecretStore.load(List.of(spec("L", new SecretSource.File(f), List.of("api.example.com"),
                List.of("Authorization"), null, false, true)), Placeholders.withKey(Fixtures.KEY), k -> null, clock);
        String ph = store.placeholders().get("L");
        assertThat(store.exchange("api.example.com").inject(auth(ph), "/"))
                .isEqualTo(new Refused("secret_unavailable", "L", "header Authorization"));

        Files.writeString(f, "arrived-late-123");
        assertThat(store.exchange("api.example.com").inject(auth(ph), "/"))
                .as("retried at most every 5 s").isInstanceOf(Refused.class);
        clock.now.set(clock.now.get().plus(Duration.ofSeconds(6)));
        HttpHeaders h = auth(ph);
        assertThat(store.exchange("api.example.com").inject(h, "/")).isEqualTo(new Injected(List.of("L")));
        assertThat(h.get("Authorization")).isEqualTo("Bearer arrived-late-123");
        // the value that appeared is scrubbed from responses too
        assertThat(store.scrubPatterns().isEmpty()).isFalse();
    }

    @Test
    void closedStoreFailsClosed() throws Exception {
        SecretStore store = Fixtures.store(Map.of("A", Fixtures.token("a_")),
                env("A", List.of("api.example.com"), List.of("Authorization")));
        store.close();
        assertThat(store.exchange("api.example.com").inject(auth(store.placeholders().get("A")), "/"))
                .isEqualTo(new Refused("secret_unavailable", "A", "header Authorization"));
    }

    @Test
    void duplicateFixedPlaceholdersAreRefused() {
        assertThatThrownBy(() -> Fixtures.store(Map.of("A", "aaaaaaaaaa", "B", "bbbbbbbbbb"),
                spec("A", new SecretSource.Env("A"), List.of("a.example.com"), List.of("Authorization"), "fixed-placeholder-1", false, false),
                spec("B", new SecretSource.Env("B"), List.of("a.example.com"), List.of("Authorization"), "fixed-placeholder-1", false, false)))
                .hasMessage("secrets[1] B: placeholder is the same as A's (expected: a distinct placeholder per secret)");
    }

    @Test
    void fixedPlaceholderIsUsed() throws Exception {
        SecretStore store = Fixtures.store(Map.of("A", "aaaaaaaaaa"),
                spec("A", new SecretSource.Env("A"), List.of("a.example.com"), List.of("Authorization"), "my-fixed-placeholder", false, false));
        HttpHeaders h = auth("my-fixed-placeholder");
        assertThat(store.exchange("a.example.com").inject(h, "/")).isEqualTo(new Injected(List.of("A")));
        assertThat(h.get("Authorization")).isEqualTo("Bearer aaaaaaaaaa");
    }

    @Test
    void toStringsNeverShowValues() throws Exception {
        String v = Fixtures.token("tostring_");
        SecretStore store = Fixtures.store(Map.of("A", v), env("A", List.of("a.example.com"), List.of("Authorization")));
        ExchangeSecrets ex = store.exchange("a.example.com");
        ex.inject(auth(store.placeholders().get("A")), "/");
        List<Object> all = List.of(store, ex, ex.bodyGuard(), ex.responseScrubber(io.netty.buffer.ByteBufAllocator.DEFAULT, 1),
                store.entries().getFirst(), store.patterns(), SecretValue.of(v.getBytes(StandardCharsets.UTF_8)), Placeholders.withKey(Fixtures.KEY),
                new Refused("secret_wrong_host", "A", "url"));
        for (Object o : all) {
            assertThat(o.toString()).as(o.getClass().getSimpleName()).doesNotContain(v).doesNotContain(v.substring(9));
        }
        assertThat(SecretValue.of(v.getBytes(StandardCharsets.UTF_8)).toString()).isEqualTo("SecretValue[redacted]");
    }
}
