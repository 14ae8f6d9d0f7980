package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostNamesTest {

    @ParameterizedTest
    @CsvSource({
        "Example.COM, example.com",
        "example.com., example.com",
        "API.GitHub.com., api.github.com",
        "bücher.example, xn--bcher-kva.example",
        "BÜCHER.example, xn--bcher-kva.example",
        "xn--bcher-kva.example, xn--bcher-kva.example",
        "XN--BCHER-KVA.EXAMPLE, xn--bcher-kva.example",
        "ｅｘａｍｐｌｅ．com, example.com",
        "127.0.0.1, 127.0.0.1",
        "127.0.0.1., 127.0.0.1",
        "[::1], ::1",
        "[2001:DB8::0:1], 2001:db8::1",
        "::ffff:7f00:1, ::ffff:7f00:1",
        "a-b.example, a-b.example",
        "1a.example, 1a.example",
        "localhost, localhost",
    })
    void normalizes(String raw, String expected) {
        assertThat(HostNames.normalize(raw)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.1|not a canonical IPv4",
        "2130706433|not a canonical IPv4",
        "0x7f.1|not a canonical IPv4",
        "0x7f000001|not a canonical IPv4",
        "0177.0.0.1|not a canonical IPv4",
        "1.2.3.4.5|not a canonical IPv4",
        "allowed.com@evil.net|userinfo",
        "allowed.com%2eevil.net|percent-escape",
        "allowed%2ecom|percent-escape",
        "allowed.com:443|port",
        "allowed.com/evil|'/'",
        "[::1%eth0]|zone id",
        "fe80::1%25eth0|zone id",
        "[::1|unclosed",
        "[127.0.0.1]|not a valid IPv6",
        "a..b|empty label",
        ".example.com|empty label",
        "example.com..|empty label",
        ".|empty",
        "under_score.example|'_'",
        "-lead.example|'-'",
        "trail-.example|'-'",
        "ab--cd.example|reserved label",
        "xn--zz.example|invalid punycode",
        "a b.example|space",
        "evil\u0000.example|control",
        "*.example.com|'*'",
        "straße.example|IDNA 2003 and IDNA 2008",
        "a\u200db.example|IDNA 2003 and IDNA 2008",
    })
    void refusesWithReason(String raw, String reason) {
        assertThatThrownBy(() -> HostNames.normalize(raw)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @org.junit.jupiter.api.Test
    void refusesOverlongNamesAndLabels() {
        String label63 = "a".repeat(63);
        assertThat(HostNames.normalize(label63 + ".example")).isEqualTo(label63 + ".example");
        assertThatThrownBy(() -> HostNames.normalize("a".repeat(64) + ".example"))
                .hasMessageContaining("longer than 63");
        String name253 = (label63 + ".").repeat(3) + "a".repeat(61);
        assertThat(name253).hasSize(253);
        assertThat(HostNames.normalize(name253 + ".")).isEqualTo(name253);
        assertThatThrownBy(() -> HostNames.normalize(name253 + "a")).hasMessageContaining("longer than 253");
        assertThatThrownBy(() -> HostNames.normalize("a.".repeat(5000) + "com")).hasMessageContaining("longer than");
    }
}
