package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code cli.Main} reads ahead for {@code sallyport proxy --config FILE} is used only for a start whose own
 * policy asks for the same: a different CA, a policy edited between the guess and the start, or a guess that did
 * not load never leaks into the start, and a policy that can be read only once (a pipe) is not read ahead.
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

    @Test
    void aPipeNamedAsThePolicyIsLeftForTheStartToRead() throws Exception {
        Path fifo = dir.resolve("policy.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        HeadStart.beginProxy(fifo);
        // the pipe's writer and reader block each other: two threads, daemons so a failure cannot hang the JVM
        ExecutorService threads = Executors.newFixedThreadPool(2, Thread.ofPlatform().daemon().factory());
        CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
            try {
                Files.writeString(fifo, policyText("one"));   // one writer, read once: by the start's own load
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, threads);
        Policy policy = CompletableFuture.supplyAsync(() -> {
            try {
                return PolicyLoader.load(fifo);
            } catch (PolicyException e) {
                throw new IllegalStateException(e);
            }
        }, threads).get(10, TimeUnit.SECONDS);
        written.get(10, TimeUnit.SECONDS);
        threads.shutdown();
        assertThat(policy.ca().cert()).as("the whole file, read by the start")
                .isEqualTo(dir.resolve("one").resolve(CertificateAuthority.CERT_FILE));
    }

    private SallyportProxy start(Path policy) throws Exception {
        return SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(policy))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0)));
    }

    private Path policy(String name, String ca) throws Exception {
        return Files.writeString(dir.resolve(name), policyText(ca));
    }

    private String policyText(String ca) {
        Path folder = dir.resolve(ca);
        return """
                ca: {cert: %s, key: %s}
                audit: {path: "-"}
                rules: []
                """.formatted(folder.resolve(CertificateAuthority.CERT_FILE),
                folder.resolve(CertificateAuthority.KEY_FILE));
    }
}
