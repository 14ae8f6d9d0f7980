package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PatternTest {

    @ParameterizedTest
    @CsvSource({
        "example.com, example.com, true",
        "example.com, www.example.com, false",
        "example.com, evilexample.com, false",
        "*.example.com, a.example.com, true",
        "*.example.com, a.b.c.example.com, true",
        "*.example.com, example.com, false",
        "*.example.com, evilexample.com, false",
        "*.example.com, example.com.evil.net, false",
        "*.example.com, a.example.com.evil.net, false",
        "*.Example.COM., a.example.com, true",
        "*.bücher.example, www.xn--bcher-kva.example, true",
        "10.0.0.1, 10.0.0.1, true",
        "[::1], ::1, true",
    })
    void hostPatterns(String pattern, String host, boolean expected) {
        assertThat(HostPattern.parse(pattern).matches(HostNames.normalize(host))).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "*|not a valid pattern",
        "*.com|top-level domain",
        "*.*.com|not a valid pattern",
        "a.*.com|not a valid pattern",
        "foo*.example.com|not a valid pattern",
        "*example.com|not a valid pattern",
        "**.example.com|not a valid pattern",
        "*.10.0.0.1|IP address",
        "example.com:443|port",
        "example.com/path|path",
        "user@example.com|userinfo",
        "example..com|empty label",
        "exa_mple.com|'_'",
        "127.1|canonical",
    })
    void badHostPatterns(String pattern, String reason) {
        assertThatThrownBy(() -> HostPattern.parse(pattern)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @ParameterizedTest
    @CsvSource({
        "/repos/acme/**, /repos/acme/x, true",
        "/repos/acme/**, /repos/acme/x/y/z, true",
        "/repos/acme/**, /repos/acme, true",
        "/repos/acme/**, /repos/acme/, true",
        "/repos/acme/**, /repos/acmex, false",
        "/repos/acme/**, /repos/other/acme, false",
        "/repos/*/issues, /repos/acme/issues, true",
        "/repos/*/issues, /repos/acme/x/issues, false",
        "/repos/*/issues, /repos/issues, false",
        "/repos/*/issues, /repos/acme/issues/, false",
        "/**/x, /x, true",
        "/**/x, /a/b/x, true",
        "/**/x, /a/b/x/y, false",
        "/a/**/b/**/c, /a/q/b/r/s/c, true",
        "/a/**/b/**/c, /a/b/c, true",
        "/a/**/b/**/c, /a/c/b, false",
        "/**, /, true",
        "/**, /anything/at/all/, true",
        "/, /, true",
        "/, /a, false",
        "/a/, /a/, true",
        "/a/, /a, false",
        "/a, /a/, false",
        "/%61, /a, true",
        "/*, /, false",
        "/*/*, /a/b, true",
    })
    void pathPatterns(String pattern, String path, boolean expected) {
        assertThat(PathPattern.parse(pattern).matches(PathNormalizer.normalize(path))).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "repos/**|does not start",
        "/v1/*.json|star inside",
        "/a//b|empty segment",
        "/a/../b|dot segment",
        "/a/./b|dot segment",
        "/a%2Fb|encoded slash",
        "/a?x=1|query",
    })
    void badPathPatterns(String pattern, String reason) {
        assertThatThrownBy(() -> PathPattern.parse(pattern)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }
}
