package dev.sallyport.ca.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SubjectNameTest {
    @ParameterizedTest
    @CsvSource({
        "api.example.test, api.example.test",
        "API.Example.TEST., api.example.test",
        "under_score.example.test, under_score.example.test",
        "localhost, localhost",
        "xn--bcher-kva.example, xn--bcher-kva.example",
        "1.2.3.example, 1.2.3.example"})
    void dnsNamesAreNormalized(String raw, String key) {
        SubjectName name = SubjectName.parse(raw);
        assertThat(name.key()).isEqualTo(key);
        assertThat(name.isIp()).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
        "127.0.0.1, 127.0.0.1",
        "0.0.0.0, 0.0.0.0",
        "255.255.255.255, 255.255.255.255",
        "::1, 0:0:0:0:0:0:0:1",
        "[::1], 0:0:0:0:0:0:0:1",
        "2001:DB8::1, 2001:db8:0:0:0:0:0:1"})
    void ipLiteralsAreRecognizedWithoutDns(String raw, String key) {
        SubjectName name = SubjectName.parse(raw);
        assertThat(name.isIp()).isTrue();
        assertThat(name.key()).isEqualTo(key);
        assertThat(name.address()).isEqualTo(InetAddress.ofLiteral(raw.replace("[", "").replace("]", "")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "1.2", "1.2.3", "0x7f.0.0.1", "017.0.0.1", "1.2.3.256", "1..2.3", "127.1",
            "2130706433", "1.2.3.0x4", "example.0x", "example.123", "[example.test]", "fe80::1%1", "::g", "a b", "a\u0000b", "ex\u00e4mple.test"})
    void looseOrAmbiguousFormsAreRejected(String raw) {
        assertThatThrownBy(() -> SubjectName.parse(raw)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(expected: an ASCII host name, a canonical IPv4 literal or an IPv6 literal)")
                .hasMessageNotContaining("\n").hasMessageNotContaining("\u0000");
    }

    @Test
    void overlongNamesAndLabelsAreRejected() {
        assertThatThrownBy(() -> SubjectName.parse("a".repeat(64) + ".test")).hasMessageContaining("label of length 64");
        String longName = ("a".repeat(60) + ".").repeat(5) + "test";
        assertThatThrownBy(() -> SubjectName.parse(longName)).hasMessageContaining("length 309");
    }
}
