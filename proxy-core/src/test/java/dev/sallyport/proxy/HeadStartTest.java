package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code cli.Main} reads ahead for {@code sallyport proxy --config FILE} is used only for a start whose own
 * policy asks for the same: a different CA, a policy edited between the guess and the start, or a guess that did
 * not load never leaks into the start.
 */
class HeadStartTest {

    @TempDir
    Path dir;

    @Test
    void aStartUsesTheCaItsOwnPolicyNamesNotTheOneReadAhead() throws Exception {
        CertificateAuthority one = CertificateAuthority.init(dir.resolve("one"), "one", KeyType.EC_P256, 1);
        CertificateAuthority two = CertificateAuthority.init(dir.resolve("two"), "two", KeyType.EC_P256, 1);
        Path policyOne = policy("one.yaml", "one");
        Path policyTwo = policy("two.yaml", "two");

        HeadStart.beginProxy(policyOne);
        try (SallyportProxy proxy = start(policyTwo)) {
            assertThat(proxy.ca().certificate()).isEqualTo(two.certificate());
        }
        HeadStart.beginProxy(policyOne);
        try (SallyportProxy proxy = start(policyOne)) {
            assertThat(proxy.ca().certificate()).isEqualTo(one.certificate());
        }
    }

    @Test
    void aPolicyEditedAfterTheGuessStartsWithItsNewCa() throws Exception {
        CertificateAuthority.init(dir.resolve("one"), "one", KeyType.EC_P256, 1);
        CertificateAuthority two = CertificateAuthority.init(dir.resolve("two"), "two", KeyType.EC_P256, 1);
        Path file = policy("p.yaml", "one");
        HeadStart.beginProxy(file);
        policy("p.yaml", "two");   // what the start then loads
        try (SallyportProxy proxy = start(file)) {
            assertThat(proxy.ca().certificate()).isEqualTo(two.certificate());
        }
    }

    @Test
    void aGuessThatDoesNotLoadLeavesTheStartItsOwnResult() throws Exception {
        CertificateAuthority one = CertificateAuthority.init(dir.resolve("one"), "one", KeyType.EC_P256, 1);
        HeadStart.beginProxy(dir.resolve("missing.yaml"));
        try (SallyportProxy proxy = start(policy("p.yaml", "one"))) {
            assertThat(proxy.ca().certificate()).isEqualTo(one.certificate());
        }
    }

    @Test
    void aCaThatFailsToLoadFailsTheStartWithTheSameMessage() throws Exception {
        CertificateAuthority.init(dir.resolve("one"), "one", KeyType.EC_P256, 1);
        Files.writeString(dir.resolve("one").resolve(CertificateAuthority.KEY_FILE), "not a key\n");
        Path file = policy("p.yaml", "one");
        HeadStart.beginProxy(file);
        assertThatThrownBy(() -> start(file)).isInstanceOf(CaException.class).hasMessageContaining("CA key");
    }

    private SallyportProxy start(Path policy) throws Exception {
        return SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(policy))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0)));
    }

    private Path policy(String name, String ca) throws Exception {
        Path folder = dir.resolve(ca);
        return Files.writeString(dir.resolve(name), """
                ca: {cert: %s, key: %s}
                audit: {path: "-"}
                rules: []
                """.formatted(folder.resolve(CertificateAuthority.CERT_FILE),
                folder.resolve(CertificateAuthority.KEY_FILE)));
    }
}
