package dev.sallyport.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.UpstreamProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parent's credentials: read from an environment variable or a file, never shown, refused with one line. */
class ParentProxyCredentialsTest {

    static UpstreamProxy parent(SecretSource credentials) {
        return new UpstreamProxy(new HostPort("proxy.corp.example", 3128), credentials, List.of(), List.of());
    }

    static String basic(String credentials) {
        return "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void fromAnEnvironmentVariableAndNeverInToString() {
        ParentProxy p = ParentProxy.of(parent(new SecretSource.Env("PARENT_AUTH")),
                Map.of("PARENT_AUTH", "ci:s3cret-pa55"));
        assertThat(p.authorization()).isEqualTo(basic("ci:s3cret-pa55"));
        assertThat(p.toString()).doesNotContain("s3cret").doesNotContain(basic("ci:s3cret-pa55").substring(6))
                .contains("with credentials");
        assertThatThrownBy(() -> ParentProxy.of(parent(new SecretSource.Env("PARENT_AUTH")), Map.of()))
                .hasMessage("upstream.proxy.credentials.env: PARENT_AUTH is unset or empty (expected: user:password)");
    }

    @Test
    void fromAFileWithoutItsFinalNewline(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("parent.auth"), "ci:pa55:with:colons\n");
        assertThat(ParentProxy.of(parent(new SecretSource.File(file)), Map.of()).authorization())
                .isEqualTo(basic("ci:pa55:with:colons"));
        Path missing = dir.resolve("missing.auth");
        assertThatThrownBy(() -> ParentProxy.of(parent(new SecretSource.File(missing)), Map.of()))
                .hasMessageStartingWith("upstream.proxy.credentials.file: " + missing + ": cannot be read");
    }

    @Test
    void aValueThatIsNotOneLineUserColonPasswordIsRefusedWithoutShowingIt(@TempDir Path dir) throws Exception {
        for (String bad : List.of("no-colon-s3cret", ":s3cret", "ci:s3cret\nsecond line", "ci:s3cret\r\n\n")) {
            Path file = Files.writeString(dir.resolve("bad.auth"), bad);
            assertThatThrownBy(() -> ParentProxy.of(parent(new SecretSource.File(file)), Map.of()))
                    .as(bad).hasMessageContaining("does not hold one line user:password")
                    .hasMessageNotContaining("s3cret");
        }
    }

    @Test
    void withoutCredentialsNoHeaderIsSent() {
        assertThat(ParentProxy.of(parent(null), Map.of()).authorization()).isNull();
    }
}
