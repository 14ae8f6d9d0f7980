package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.sallyport.testing.ExternalProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretsEnvTest {

    @TempDir
    Path dir;

    @Test
    void printsStablePlaceholdersPerStateDirectoryAndNeverTheValue() throws Exception {
        Path policy = dir.resolve("p.yaml");
        Files.writeString(policy, """
                rules:
                  - name: api
                    hosts: [api.example.com]
                secrets:
                  - name: API_KEY
                    from: env:API_KEY
                    hosts: [api.example.com]
                    headers: [X-Api-Key]
                  - name: FIXED
                    from: env:API_KEY
                    hosts: [api.example.com]
                    headers: [Authorization]
                    placeholder: sallyport-ph-fixedfortests
                """);
        String value = "real-secret-value-0123456789";
        Map<String, String> env = Map.of("SALLYPORT_HOME", dir.resolve("state").toString(), "API_KEY", value);
        ExternalProcess.Result first = CliProcess.run(env, Duration.ofSeconds(60), "secrets", "env", "--config", policy.toString());
        assertThat(first.exit()).as(first.stderr()).isZero();
        assertThat(first.stdout()).matches("API_KEY=sallyport-ph-[a-z2-7]{26}\nFIXED=sallyport-ph-fixedfortests\n");
        assertThat(first.stdout() + first.stderr()).doesNotContain(value);

        ExternalProcess.Result again = CliProcess.run(env, Duration.ofSeconds(60), "secrets", "env", "--config", policy.toString());
        assertThat(again.stdout()).isEqualTo(first.stdout());

        Map<String, String> otherState = Map.of("SALLYPORT_HOME", dir.resolve("other").toString());
        ExternalProcess.Result other = CliProcess.run(otherState, Duration.ofSeconds(60), "secrets", "env", "--config", policy.toString());
        assertThat(other.stdout().lines().findFirst()).isNotEqualTo(first.stdout().lines().findFirst());
    }
}
