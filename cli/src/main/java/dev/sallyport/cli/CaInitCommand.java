package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import dev.sallyport.policy.StateDirectory;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport ca init}: writes ca.pem and ca-key.pem (0600); never overwrites an existing CA. */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Create a CA: DIR/ca.pem (certificate) and DIR/ca-key.pem (private key, mode 0600).")
public final class CaInitCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "Folder for the CA files (default: $SALLYPORT_HOME/ca, i.e. ~/.local/share/sallyport/ca).")
    Path dir;

    @Option(names = "--name", paramLabel = "NAME", defaultValue = "Sallyport Local CA",
            description = "Common name of the CA certificate (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--key", paramLabel = "TYPE", defaultValue = "ec-p256",
            description = "Key type: ec-p256, rsa-2048 or rsa-4096 (default: ${DEFAULT-VALUE}).")
    String key;

    @Option(names = "--days", paramLabel = "N", defaultValue = "3650",
            description = "Validity in days (default: ${DEFAULT-VALUE}).")
    int days;

    @Override
    public Integer call() throws Exception {
        if (days <= 0) {
            throw new UsageException("--days: " + days + " (expected: > 0)");
        }
        KeyType type;
        try {
            type = KeyType.parse(key);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--key: '" + key + "' (expected: ec-p256, rsa-2048 or rsa-4096)");
        }
        Path target = dir != null ? dir : StateDirectory.resolve().resolve("ca");
        CertificateAuthority ca = CertificateAuthority.init(target, name, type, days);
        var out = spec.commandLine().getOut();
        out.println("created CA '" + name + "' (" + key + ", " + days + " days)");
        out.println("  certificate: " + target.resolve("ca.pem"));
        out.println("  private key: " + target.resolve("ca-key.pem") + " (mode 0600; keep it away from sandboxes)");
        out.println("  fingerprint: " + Fingerprints.sha256(ca.certificate()));
        out.flush();
        return 0;
    }
}
