package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The guesses {@link Main} makes ahead of picocli's parse, for the head start of a proxy. */
class MainTest {
    @Test
    void aRunNamingARunningProxyStartsNoHeadStartAndOneWithItsOwnProxyDoes() {
        assertThat(Main.attaches("run", "--proxy", "127.0.0.1:3128", "--", "true")).isTrue();
        assertThat(Main.attaches("run", "--workdir", "/w", "--proxy=127.0.0.1:3128", "--", "true")).isTrue();
        assertThat(Main.attaches("run", "--", "true")).isFalse();
        // after "--" the words are the command's own
        assertThat(Main.attaches("run", "--", "curl", "--proxy", "http://127.0.0.1:3128", "x")).isFalse();
        // --proxy-admin and --proxy-token alone attach to nothing
        assertThat(Main.attaches("run", "--proxy-admin", "127.0.0.1:9901", "--", "true")).isFalse();
    }
}
