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
        "/a/b%2520c|/a/b%2520c",
        "/a/100%25-off|/a/100%25-off",
        "/a/%25%C3%A9|/a/%25%C3%A9",
        "/a/%E0%A4%85|/a/%E0%A4%85",
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
        // regression (issue 11 item 9): these reached a path-restricted host through backends that decode twice
        "/public/%252e%252e/private/x|double encoding",
        "/public/%252E%252e/private/x|double encoding",
        "/public/%252e./private/x|double encoding",
        "/public/.%252E/private/x|double encoding",
        "/public/%25252e%25252e/private/x|double encoding",
        "/public/..%252fprivate/x|double encoding",
        "/public/..%255Cprivate/x|double encoding",
        "/public/%25%32%65%25%32%65/private|double encoding",
        "/public/%25%32%45.|double encoding",
        "/public/%25u002e%25u002e/private|double encoding",
        "/public/..%253b/private|double encoding",
        "/public/..%253F/private|double encoding",
        "/public/..%2523/private|double encoding",
        "/public/..%2500/private|double encoding",
        "/public/%25c0%25ae|double encoding",
        "/public/%c0%ae%c0%ae/private|overlong UTF-8",
        "/public/%C0%AF|overlong UTF-8",
        "/public/%c1%9c|overlong UTF-8",
        "/public/%e0%80%ae|overlong UTF-8",
        "/public/%f0%80%80%ae|overlong UTF-8",
        "/public/%u002e|invalid percent-escape",
    })
    void refusesAmbiguousPaths(String raw, String reason) {
        assertThatThrownBy(() -> PathNormalizer.normalize(raw)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @org.junit.jupiter.api.Test
    void decodesOnlyOnce() {
        // %2541 is "%41" once decoded; decoding again would give "A" and make two paths one.
        assertThat(PathNormalizer.normalize("/%2541")).isNotEqualTo(PathNormalizer.normalize("/A"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "/a/b|/a/b",
        "/a;x/b|/a;x/b /a/b",
        "/admin;jsessionid=1/users|/admin;jsessionid=1/users /admin/users",
        "/a/secret%3f/../b|/a/b /a/secret",
        "/a/x%23y/z;p|/a/x%23y/z;p /a/x%23y/z /a/x",
        "/a/..%3F/b|/a/..%3F/b /",
    })
    void readingsAreTheNormalFormThenWhatParameterAndQueryCuttingBackendsRead(String raw, String readings) {
        assertThat(PathNormalizer.readings(raw)).containsExactly(readings.split(" "));
    }

    @org.junit.jupiter.api.Test
    void aReadingAboveTheRootIsRefused() {
        assertThatThrownBy(() -> PathNormalizer.readings("/..%3F/x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("climbs above the root");
    }
}
