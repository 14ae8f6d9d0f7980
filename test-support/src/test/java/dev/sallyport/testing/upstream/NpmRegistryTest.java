package dev.sallyport.testing.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tarballs npm gets are archives GNU tar reads back byte for byte, sizes on and off a 512-byte block. */
class NpmRegistryTest {

    @TempDir
    Path dir;

    @Test
    void tarReadsTheTarballBackAsWritten() throws Exception {
        Map<String, String> files = new LinkedHashMap<>();
        files.put("package.json", "{\"name\":\"x\"}\n");
        files.put("lib/block.txt", "b".repeat(512));
        files.put("empty.js", "");
        Path tgz = Files.write(dir.resolve("x.tgz"), NpmRegistry.tarball(files));

        ExternalProcess.Result list = ExternalProcess.run(Duration.ofSeconds(30),
                List.of("tar", "-tvzf", tgz.toString()), null);
        assertThat(list.exit()).as(list.stderr()).isZero();
        assertThat(list.stdout().lines().toList()).hasSize(3).allMatch(l -> l.startsWith("-rw-r--r--"));
        ExternalProcess.Result extract = ExternalProcess.run(Duration.ofSeconds(30),
                List.of("tar", "-xzf", tgz.toString(), "-C", dir.toString()), null);
        assertThat(extract.exit()).as(extract.stderr()).isZero();
        for (Map.Entry<String, String> file : files.entrySet()) {
            assertThat(Files.readString(dir.resolve("package").resolve(file.getKey()), StandardCharsets.UTF_8))
                    .as(file.getKey()).isEqualTo(file.getValue());
        }
    }
}
