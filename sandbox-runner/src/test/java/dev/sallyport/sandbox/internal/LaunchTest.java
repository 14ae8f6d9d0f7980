package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LaunchTest {
    @Test
    void roundTrips() throws IOException {
        Launch launch = new Launch(List.of("sh", "-c", "echo ü"), Map.of("A", "1", "B", ""), "/w", 3128,
                "/run/sallyport/host.sock", true, List.of("/"), List.of("/w", "/tmp"), List.of("/dev"), 8L << 30, 4096,
                true, 5, List.of("running as uid 1000"), List.of("/run/sallyport/gitconfig", "/home/u/.gitconfig"), true);
        assertThat(Launch.decode(launch.encode())).isEqualTo(launch);
    }

    @Test
    void refusesForeignBytes() {
        assertThatThrownBy(() -> Launch.decode(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))
                .isInstanceOf(IOException.class).hasMessageContaining("bad header");
    }
}
