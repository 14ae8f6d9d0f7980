package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The start trace's time zero: bash's {@code $EPOCHREALTIME}, any other value, or off. */
class StartTraceTest {

    @Test
    void timeZeroComesFromTheVariable() {
        assertThat(StartTrace.zero(null)).isEqualTo(-1);
        assertThat(StartTrace.zero("")).isEqualTo(-1);
        assertThat(StartTrace.zero("1764660000.123456")).isEqualTo(1_764_660_000_123_456L);
        assertThat(StartTrace.zero("1")).isZero();
        assertThat(StartTrace.zero("1764660000,123456")).isEqualTo(1_764_660_000_123_456L);   // a locale's comma
        assertThat(StartTrace.zero("1764660000.12")).isZero();
    }
}
