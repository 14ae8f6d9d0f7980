package dev.sallyport.proxy.inject;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SecretValueTest {

    @Test
    void identityEqualityAndNoContentHash() {
        byte[] b = "same-bytes-here".getBytes(StandardCharsets.US_ASCII);
        SecretValue a = SecretValue.of(b);
        SecretValue c = SecretValue.of(b);
        assertThat(a).isNotEqualTo(c);
        assertThat(java.util.stream.Stream.of(a, c, a).distinct()).as("equal to itself only").containsExactly(a, c);
        assertThat(a.length()).isEqualTo(15);
    }

    @Test
    void copiesInputAndWipesOnClose() {
        byte[] b = "original-value".getBytes(StandardCharsets.US_ASCII);
        SecretValue v = SecretValue.of(b);
        b[0] = 'X';
        assertThat(new String(v.copyBytes(), StandardCharsets.US_ASCII)).isEqualTo("original-value");
        v.close();
        assertThat(v.isWiped()).isTrue();
        assertThatThrownBy(v::copyBytes).isInstanceOf(IllegalStateException.class).hasMessageNotContaining("original");
    }

    @Test
    void stripsOneLineBreakOnly() {
        assertThat(SecretValue.fromSource("abcdefgh\r\n".getBytes(StandardCharsets.US_ASCII)).length()).isEqualTo(8);
        assertThat(SecretValue.fromSource("abcdefgh\n".getBytes(StandardCharsets.US_ASCII)).length()).isEqualTo(8);
        assertThatThrownBy(() -> SecretValue.fromSource("abcdefgh\n\n".getBytes(StandardCharsets.US_ASCII)))
                .hasMessage("value has a control character at byte 8 (expected: a single-line token without control characters)");
        assertThatThrownBy(() -> SecretValue.of("short".getBytes(StandardCharsets.US_ASCII))).hasMessage("value has 5 bytes (expected: at least 8)");
    }
}
