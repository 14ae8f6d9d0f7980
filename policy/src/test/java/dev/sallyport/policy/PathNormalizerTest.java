package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PathNormalizerTest {

    /** Every pair is two spellings of one path: they must normalize to the same text. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "/|/",
        "/a/b?x=1|/a/b",
        "/a/b?x=/../..|/a/b",
        "/%61/%62|/a/b",
        "/a/%7e|/a/~",
        "/a/%3b|/a/;",
        "/a;b|/a;b",
        "/a/%3f|/a/%3F",
        "/a/%3F|/a/%3F",
        "/a/%25|/a/%25",
        "/a/%2541|/a/%2541",
        "/a/%20|/a/%20",
        "/a/%c3%a9|/a/%C3%A9",
        "/a//b|/a/b",
        "//a///b//|/a/b/",
        "/a/./b|/a/b",
        "/a/b/../c|/a/c",
        "/a/%2e/b|/a/b",
        "/a/%2E%2e/c|/c",
        "/a/.%2e/c|/c",
        "/a/b/..|/a/",
        "/a/b/.|/a/b/",
        "/a/b/|/a/b/",
        "/..a/b|/..a/b",
        "/a/.../b|/a/.../b",
        "/repos/acme/x/../../other|/repos/other",
        "/A/B|/A/B",
    })
    void equivalentSpellings(String raw, String normalized) {
        assertThat(PathNormalizer.normalize(raw)).isEqualTo(normalized);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "/a%2Fb|encoded slash",
        "/a%2fb|encoded slash",
        "/a%5Cb|encoded backslash",
        "/a\\b|backslash",
        "/a%00|control",
        "/a%0a|control",
        "/a%7F|control",
        "/a\u0001b|control",
        "/a%|invalid percent-escape",
        "/a%4|invalid percent-escape",
        "/a%zz|invalid percent-escape",
        "/a%%41|invalid percent-escape",
        "/..|climbs above the root",
        "/a/../..|climbs above the root",
        "/%2e%2e/etc|climbs above the root",
        "/a/..;/b|parameters",
        "/a/.;x/b|parameters",
        "a/b|does not start",
        "*|does not start",
        "?x|does not start",
        "/a#b|'#'",
        "/a\u0100|above U+00FF",
    })
    void refusesAmbiguousPaths(String raw, String reason) {
        assertThatThrownBy(() -> PathNormalizer.normalize(raw)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @org.junit.jupiter.api.Test
    void decodesOnlyOnce() {
        // %2541 is "%41" once decoded; decoding again would give "A" and make two paths one.
        assertThat(PathNormalizer.normalize("/%2541")).isNotEqualTo(PathNormalizer.normalize("/A"));
        assertThat(PathNormalizer.normalize("/%252e%252e/x")).isEqualTo("/%252e%252e/x");
    }
}
