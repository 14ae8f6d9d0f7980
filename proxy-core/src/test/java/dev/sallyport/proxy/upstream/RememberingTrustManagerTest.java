package dev.sallyport.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which host a remembered chain's DNS names stand for: exact names, and wildcards of one leftmost label. */
class RememberingTrustManagerTest {

    static final List<String> NAMES = List.of("*.example.com", "api.example.org", "*.com", "a*.example.net");

    @Test
    void exactNamesMatchWhateverTheirCaseAndATrailingDot() {
        assertThat(RememberingTrustManager.match("api.example.org", NAMES)).isEqualTo("api.example.org");
        assertThat(RememberingTrustManager.match("API.Example.ORG.", NAMES)).isEqualTo("api.example.org");
        assertThat(RememberingTrustManager.match("example.org", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("x.api.example.org", NAMES)).isNull();
    }

    @Test
    void aWildcardNamesExactlyOneMoreLabel() {
        assertThat(RememberingTrustManager.match("a.example.com", NAMES)).isEqualTo("*.example.com");
        assertThat(RememberingTrustManager.match("example.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("a.b.example.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match(".example.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("aexample.com", NAMES)).isNull();
    }

    @Test
    void wildcardsOverOneLabelOrInsideALabelNameNothing() {
        assertThat(RememberingTrustManager.match("evil.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("ab.example.net", NAMES)).isNull();
    }

    @Test
    void addressesAreLeftToTheFullCheck() {
        List<String> names = List.of("127.0.0.1", "*.0.0.1");
        assertThat(RememberingTrustManager.match("127.0.0.1", names)).isNull();
        assertThat(RememberingTrustManager.match("::1", List.of("::1"))).isNull();
    }
}
