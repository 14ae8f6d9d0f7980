package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Canonical text round-trips, and agrees with the JDK's literal-only parser on the bytes. */
class IpAddressPropertyTest {

    @Test
    void canonicalTextRoundTrips() {
        Random random = new Random(11);
        for (int n = 0; n < 20_000; n++) {
            byte[] bytes = new byte[random.nextBoolean() ? 4 : 16];
            random.nextBytes(bytes);
            if (bytes.length == 16) { // plenty of zero runs, to exercise "::"
                for (int g = 0; g < 8; g++) {
                    if (random.nextInt(3) == 0) {
                        bytes[2 * g] = 0;
                        bytes[2 * g + 1] = 0;
                    }
                }
            }
            if (bytes.length == 16 && n % 100 == 0) { // and some IPv4-mapped addresses
                java.util.Arrays.fill(bytes, 0, 10, (byte) 0);
                bytes[10] = (byte) 0xff;
                bytes[11] = (byte) 0xff;
            }
            IpAddress a = IpAddress.ofBytes(bytes);
            String text = a.toString();
            assertThat(IpAddress.parseStrict(text)).as(text).contains(a);
            byte[] jdk = InetAddress.ofLiteral(text).getAddress(); // the JDK turns IPv4-mapped into IPv4
            byte[] expected = jdk.length == bytes.length ? bytes : java.util.Arrays.copyOfRange(bytes, 12, 16);
            assertThat(jdk).as(text).isEqualTo(expected);
            assertThat(HostNames.normalize(bytes.length == 4 ? text : "[" + text.toUpperCase(Locale.ROOT) + "]")).isEqualTo(text);
        }
    }
}
