package dev.sallyport.benchmarks;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import dev.sallyport.ca.LeafCertificate;
import dev.sallyport.ca.LeafMinter;
import dev.sallyport.ca.MintListener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What a TLS-intercepting proxy pays per CONNECT for its certificate: {@link LeafMinter} minting for a host it
 * has not seen ({@code cold}: one CA signature over a fresh certificate, since the leaf key is shared) versus
 * serving a host it has ({@code cached}: the Caffeine lookup that {@code mint} and {@code cachedOrNull} do).
 * Parameterised over the CA key type, because the CA signature dominates a cold mint (RSA-4096 is the slow
 * case peers such as iron-proxy pay inside a global lock). Signing runs inline ({@code Runnable::run}) so the
 * numbers are the work itself, not executor hand-off.
 *
 * <p>Run (JDK 25):
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am package -DskipTests
 * $JAVA_HOME/bin/java -jar benchmarks/target/benchmarks.jar Mint -f 1 -wi 2 -i 3 -w 1s -r 1s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MintBenchmark {
    @Param({"ec-p256", "rsa-2048", "rsa-4096"})
    public String caKey;

    private Path dir;
    private LeafMinter minter;
    private long next;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("mint-benchmark");
        CertificateAuthority ca = CertificateAuthority.init(dir.resolve("ca"), "Benchmark CA", KeyType.parse(caKey), 2);
        minter = new LeafMinter(ca, Runnable::run, InstantSource.system(), MintListener.NONE, 1_000_000,
                LeafMinter.DEFAULT_VALIDITY);
        minter.mint("cached.example.test").join();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        minter.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A host never seen before: one leaf certificate signed by the CA. */
    @Benchmark
    public LeafCertificate cold() {
        return minter.mint("h" + next++ + ".example.test").join();
    }

    /** A host already minted: served from the cache through {@code mint}. */
    @Benchmark
    public LeafCertificate cached() {
        return minter.mint("cached.example.test").join();
    }

    /** The event loop's fast path: {@code cachedOrNull} for a cached host. */
    @Benchmark
    public LeafCertificate cachedOrNull() {
        return minter.cachedOrNull("cached.example.test");
    }
}
