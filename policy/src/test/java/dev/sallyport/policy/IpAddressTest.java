package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    @ParameterizedTest
    @CsvSource({
        "0.0.0.0, 0.0.0.0",
        "127.0.0.1, 127.0.0.1",
        "255.255.255.255, 255.255.255.255",
        "::, ::",
        "::1, ::1",
        "0:0:0:0:0:0:0:1, ::1",
        "2001:DB8::1, 2001:db8::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
        "::ffff:127.0.0.1, ::ffff:7f00:1",
        "64:ff9b::10.0.0.1, 64:ff9b::a00:1",
        "1:2:3:4:5:6:7:8, 1:2:3:4:5:6:7:8",
        "1::, 1::",
        "1:0:1:0:0:1:0:1, 1:0:1::1:0:1",
        "fe80::1:2, fe80::1:2",
        "1:2:3:4:5:6:1.2.3.4, 1:2:3:4:5:6:102:304",
    })
    void parsesCanonicalAndStandardForms(String text, String canonical) {
        assertThat(IpAddress.parseStrict(text)).map(IpAddress::toString).contains(canonical);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "127.1", "127.0.1", "2130706433", "0x7f.0.0.1", "0x7f000001", "0177.0.0.1", "127.0.0.01", "017700000001",
        "127.0.0.1.", ".127.0.0.1", "256.0.0.1", "1.2.3.4.5", "1..2.3", "+1.2.3.4", "1.2.3.-4", " 1.2.3.4",
        "1.2.3.4 ", "1.2.3", "١٢٧.0.0.1", "127.0.0.１",
        "::1%eth0", "fe80::1%25eth0", "[::1]", ":::", "1:::2", "::1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7",
        "12345::", "g::1", ":1::", "1::2:", "1:2:3:4:5:6:7::8", "::ffff:127.1", "::ffff:0177.0.0.1",
        "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4:5", "", "1.2.3.4/8", "::/0", "０::1",
    })
    void refusesEverythingElse(String text) {
        assertThat(IpAddress.parseStrict(text)).isEmpty();
    }

    @Test
    void valueSemanticsAndJdkRoundTrip() throws Exception {
        IpAddress a = IpAddress.parseStrict("2001:db8::1").orElseThrow();
        assertThat(a).isEqualTo(IpAddress.parseStrict("2001:0DB8:0:0::1").orElseThrow());
        assertThat(a.hashCode()).isEqualTo(IpAddress.parseStrict("2001:db8:0::1").orElseThrow().hashCode());
        assertThat(a.isV4()).isFalse();
        byte[] bytes = a.bytes();
        bytes[0] = 0;
        assertThat(a.byteAt(0)).isEqualTo(0x20); // defensive copy
        assertThat(IpAddress.of(InetAddress.getByAddress(new byte[] {10, 0, 0, 1})).toString()).isEqualTo("10.0.0.1");
        assertThat(IpAddress.parseStrict("10.0.0.1").orElseThrow().toInetAddress().getHostAddress()).isEqualTo("10.0.0.1");
    }
}
