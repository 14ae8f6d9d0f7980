package dev.sallyport.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.concurrent.Callable;

import dev.sallyport.ca.CaException;
import dev.sallyport.ca.CaExport;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.StateDirectory;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport ca export}: the CA certificate (never the key) as PEM, DER or a PKCS#12 trust store;
 * {@code --bundle} adds the system roots so one file can be a client's whole trust store.
 */
@Command(name = "export", mixinStandardHelpOptions = true,
        description = "Print or write the CA certificate for clients to trust.")
public final class CaExportCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "pem",
            description = "pem, der or p12 (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--bundle", description = "Add the system's root certificates (pem and p12 only).")
    boolean bundle;

    @Option(names = "--out", paramLabel = "FILE", description = "Write to FILE instead of standard output.")
    Path out;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "CA folder holding ca.pem (default: $SALLYPORT_HOME/ca).")
    Path dir;

    @Option(names = "--config", paramLabel = "FILE", description = "Use the CA named by this policy file's 'ca.cert'.")
    Path config;

    @Option(names = "--password", paramLabel = "PW", defaultValue = "changeit",
            description = "Password of the p12 trust store (default: ${DEFAULT-VALUE}, the JDK's convention).")
    String password;

    @Override
    public Integer call() throws Exception {
        Path certPath = certificatePath();
        X509Certificate cert = readCertificate(certPath);
        byte[] bytes = switch (format) {
            case "pem" -> CaExport.pem(cert, bundle);
            case "der" -> {
                if (bundle) {
                    throw new UsageException("--bundle: not possible with --format der (expected: pem or p12)");
                }
                yield CaExport.der(cert);
            }
            case "p12" -> CaExport.p12(cert, password.toCharArray(), bundle);
            default -> throw new UsageException("--format: '" + format + "' (expected: pem, der or p12)");
        };
        if (out != null) {
            Files.write(out, bytes);
            spec.commandLine().getErr().println("wrote " + out + " (" + format + (bundle ? ", with system roots" : "") + ")");
        } else {
            spec.commandLine().getOut().flush();
            OutputStream stdout = new PrintStream(System.out, true);
            stdout.write(bytes);
            stdout.flush();
        }
        return 0;
    }

    private Path certificatePath() throws Exception {
        if (config != null && dir != null) {
            throw new UsageException("--config and --dir both given (expected: at most one)");
        }
        if (config != null) {
            Policy policy = PolicyLoader.load(config);
            if (policy.ca().cert() == null) {
                return StateDirectory.resolve().resolve("ca").resolve("ca.pem");
            }
            return policy.ca().cert();
        }
        return (dir != null ? dir : StateDirectory.resolve().resolve("ca")).resolve("ca.pem");
    }

    private static X509Certificate readCertificate(Path path) throws CaException {
        if (!Files.isRegularFile(path)) {
            throw new RuntimeFailure(path + ": no CA certificate there (expected: a PEM file; create one with 'sallyport ca init')");
        }
        return CaExport.readCertificate(path);
    }
}
