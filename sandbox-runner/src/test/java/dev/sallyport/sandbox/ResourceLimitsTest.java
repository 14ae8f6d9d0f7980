package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.ExternalProcess;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResourceLimitsTest {
    @Test
    void sizesParseInBinaryUnits() {
        assertThat(ResourceLimits.parseSize("--memory", "8g")).isEqualTo(8L << 30);
        assertThat(ResourceLimits.parseSize("--memory", "512M")).isEqualTo(512L << 20);
        assertThat(ResourceLimits.parseSize("--memory", "2GiB")).isEqualTo(2L << 30);
        assertThat(ResourceLimits.parseSize("--memory", "64k")).isEqualTo(64L << 10);
        assertThat(ResourceLimits.parseSize("--memory", "1048576")).isEqualTo(1L << 20);
        assertThatThrownBy(() -> ResourceLimits.parseSize("--memory", "8 gigs"))
                .hasMessage("--memory: '8 gigs' (expected: a size like 512m, 8g or a number of bytes)");
        assertThatThrownBy(() -> ResourceLimits.parseSize("--memory", "99999999999999t"))
                .hasMessageContaining("is too large");
        assertThat(ResourceLimits.format(8L << 30)).isEqualTo("8 GiB");
        assertThat(ResourceLimits.format(1536L << 10)).isEqualTo("1536 KiB");
    }

    @Test
    void limitsABuildCannotLiveWithAreRefused() {
        ResourceLimits d = ResourceLimits.defaults();
        assertThat(d.memoryBytes()).isEqualTo(8L << 30);
        assertThat(d.pids()).isEqualTo(4096);
        assertThat(d.tmpfsBytes()).isEqualTo(2L << 30);
        assertThat(d.inotifyInstances()).isPositive();
        // half of what the kernel says, read whole (a sysctl read a byte at a time gives its first digit only)
        assertThat((long) d.inotifyWatches()).isEqualTo(kernel("max_user_watches") / 2);
        assertThat((long) d.inotifyInstances()).isEqualTo(kernel("max_user_instances") / 2);
        assertThatThrownBy(() -> d.withMemory(64L << 20)).hasMessage("memory: 67108864 bytes (expected: at least 128 MiB)");
        assertThatThrownBy(() -> d.withPids(8)).hasMessage("pids: 8 (expected: at least 32)");
        assertThatThrownBy(() -> d.withTmpfs(1000)).hasMessageContaining("expected: at least 1 MiB");
    }

    private static long kernel(String name) {
        ExternalProcess.Result cat = ExternalProcess.run(Duration.ofSeconds(10),
                List.of("cat", "/proc/sys/fs/inotify/" + name), null);
        assertThat(cat.exit()).as(cat.stderr()).isZero();
        return Long.parseLong(cat.stdout().trim());
    }
}
