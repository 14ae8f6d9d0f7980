package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

    private static IpAddress ip(String s) {
        return IpAddress.parseStrict(s).orElseThrow();
    }

    @ParameterizedTest
    @CsvSource({
        "10.0.0.0/8, 10.255.1.2, true",
        "10.0.0.0/8, 11.0.0.0, false",
        "100.64.0.0/10, 100.127.255.255, true",
        "100.64.0.0/10, 100.128.0.0, false",
        "0.0.0.0/0, 8.8.8.8, true",
        "0.0.0.0/0, ::1, false",
        "1.2.3.4, 1.2.3.4, true",
        "1.2.3.4, 1.2.3.5, false",
        "fc00::/7, fdff::1, true",
        "fc00::/7, fe00::1, false",
        "fe80::/10, febf::1, true",
        "fe80::/10, fec0::1, false",
        "::/0, 10.0.0.1, false",
        "2001:db8::/32, 2001:db8:ffff::1, true",
    })
    void contains(String cidr, String address, boolean expected) {
        assertThat(Cidr.parse(cidr).contains(ip(address))).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/08", "::/129", "10.1/16",
        "10.0.0.0/-1", "fe80::1/10", "example.com/8", "10.0.0.0/8/8"})
    void refusesAmbiguousOrInvalid(String text) {
        assertThatThrownBy(() -> Cidr.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(text.contains("/") ? "" : text);
    }
}
