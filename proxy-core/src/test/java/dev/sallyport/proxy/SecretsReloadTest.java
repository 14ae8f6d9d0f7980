package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.SecretLoadException;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The secret store follows policy reloads; a secret that cannot be read keeps the old store (and at start, fails). */
class SecretsReloadTest {

    final Path dir = ProxyFixture.tempDir();

    @Test
    void reloadBuildsANewStoreAndABrokenSourceKeepsTheOldOne() throws Exception {
        Files.writeString(dir.resolve("a"), "value-of-a-123456\n");
        Files.writeString(dir.resolve("b"), "value-of-b-123456\n");
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, policy("A", "a"));
        RecordingListener events = new RecordingListener();
        try (SallyportProxy proxy = start(file, events)) {
            assertThat(proxy.secrets().names()).containsExactly("A");

            Files.writeString(file, policy("A", "a") + secret("B", "b"));
            assertThat(proxy.policies().reload().success()).isTrue();
            assertThat(proxy.secrets().names()).containsExactly("A", "B");

            Files.writeString(file, policy("A", "a") + secret("C", "missing"));
            proxy.policies().reload();
            assertThat(proxy.secrets().names()).containsExactly("A", "B");
            assertThat(events.events).anySatisfy(e -> assertThat(e).isInstanceOfSatisfying(ProxyEvent.Reloaded.class,
                    r -> assertThat(r.result()).isEqualTo("failure")));
            assertThat(events.events.stream().filter(e -> e instanceof ProxyEvent.Reloaded r
                    && "failure".equals(r.result())).map(e -> ((ProxyEvent.Reloaded) e).errors().toString())
                    .toList().toString()).contains("secrets[1] C").doesNotContain("value-of");
        }
    }

    @Test
    void aSecretThatCannotBeReadAtStartFailsTheStartWithOneLinePerProblem() throws Exception {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, policy("A", "nope") + secret("B", "nope-either"));
        assertThatThrownBy(() -> start(file, new RecordingListener())).isInstanceOfSatisfying(
                SecretLoadException.class, e -> assertThat(e.problems()).hasSize(2)
                        .anySatisfy(p -> assertThat(p).startsWith("secrets[0] A: "))
                        .anySatisfy(p -> assertThat(p).startsWith("secrets[1] B: ")));
    }

    SallyportProxy start(Path file, RecordingListener events) throws Exception {
        return SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(file))
                .withCa(CertificateAuthority.ephemeral("reload test CA")).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", 0)).withListener(events)
                .withPlaceholders(Placeholders.ephemeral()));
    }

    String policy(String name, String source) {
        return "audit:\n  path: " + dir.resolve("audit.jsonl") + "\nrules: []\nsecrets:\n" + secret(name, source);
    }

    String secret(String name, String source) {
        return "  - name: " + name + "\n    from: file:" + dir.resolve(source) + "\n    hosts: [api.example.com]\n"
                + "    headers: [Authorization]\n";
    }
}
