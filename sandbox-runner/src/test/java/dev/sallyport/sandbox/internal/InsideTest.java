package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The fail-closed decision for kernels this machine may not have (the real-kernel path runs in the sandbox tests). */
class InsideTest {
    @Test
    void requireLandlockFailsClosedBelowAbi4() {
        for (int abi : new int[] {0, 1, 2, 3}) {
            assertThatThrownBy(() -> Inside.landlockCheck(abi, true)).isInstanceOf(Inside.SetupException.class)
                    .hasMessageContaining("expected: Landlock ABI >= 4")
                    .satisfies(e -> assertThat(((Inside.SetupException) e).status()).isEqualTo(Inside.SETUP_FAILED));
        }
    }

    @Test
    void withoutRequireABelowAbi4KernelWarnsAndAFullOneIsQuiet() throws Exception {
        assertThat(Inside.landlockCheck(0, false)).startsWith("landlock: not available");
        assertThat(Inside.landlockCheck(3, false)).contains("not the TCP rule");
        assertThat(Inside.landlockCheck(4, true)).isNull();
        assertThat(Inside.landlockCheck(7, false)).isNull();
    }
}
