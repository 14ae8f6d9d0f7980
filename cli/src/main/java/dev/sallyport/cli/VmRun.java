package dev.sallyport.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.sandbox.internal.TrustFiles;
import dev.sallyport.sandbox.net.SandboxNetwork;
import dev.sallyport.sandbox.vm.NerdctlSpec;
import dev.sallyport.sandbox.vm.ResourceLimits;
import dev.sallyport.sandbox.vm.UserIds;
import dev.sallyport.sandbox.vm.VmRunner;
import dev.sallyport.sandbox.vm.VmRuntime;

import picocli.CommandLine.Model.CommandSpec;

/**
 * The nerdctl backend of {@code sallyport run}: a network of its own, the proxy on its gateway address (started
 * only once the bridge exists), the trust files where containerd can read them, then the workload.
 */
final class VmRun {

    private static final int PROXY_PORT = 3128;

    private final CommandSpec spec;
    private final Policy policy;
    private final Path workspace;
    private final String runtime;
    private final String image;
    private final List<String> command;
    private final boolean dryRun;
    private final Placeholders placeholders;

    VmRun(CommandSpec spec, Policy policy, Path workspace, String runtime, String image, List<String> command,
          boolean dryRun, Placeholders placeholders) {
        this.spec = spec;
        this.policy = policy;
        this.workspace = workspace;
        this.runtime = runtime;
        this.image = image;
        this.command = command;
        this.dryRun = dryRun;
        this.placeholders = placeholders;
    }

    int run(Map<String, String> placeholders) throws Exception {
        if (image == null || image.isBlank()) {
            throw new UsageException("--image: missing (expected: the container image to run, with --backend nerdctl)");
        }
        VmRuntime vmRuntime;
        try {
            vmRuntime = VmRuntime.parse(runtime);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--runtime: '" + runtime + "' (expected: kata, runc or runsc)");
        }
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport run CA");
        Path trustDir = trustFiles(ca);
        SandboxNetwork network = SandboxNetwork.allocate(PROXY_PORT);
        NerdctlSpec nerdctl = NerdctlSpec.of(network, vmRuntime, image, command, workspace, UserIds.caller(workspace),
                        trustDir.resolve(TrustFiles.BUNDLE))
                .withJavaTrustStore(trustDir.resolve(TrustFiles.P12))
                .withSecrets(placeholders)
                .with(ResourceLimits.DEFAULTS, System.console() != null, "nerdctl");
        var out = WriterStream.over(spec.commandLine().getOut());
        try {
            return VmRunner.run(nerdctl, dryRun, out, listen -> SallyportProxy.start(ProxyOptions.of(policy).withCa(ca)
                    .withListen(new HostPort(listen.getAddress().getHostAddress(), listen.getPort()))
                    .withAdmin(new HostPort("127.0.0.1", 0)).withPlaceholders(this.placeholders)));
        } finally {
            out.flush();
            if (!dryRun) {
                deleteTree(trustDir);
            }
        }
    }

    /** The CA bundle and Java trust store, in a root-owned folder under /run that containerd can read. */
    private Path trustFiles(CertificateAuthority ca) throws IOException {
        Path base = dryRun ? Files.createTempDirectory("sallyport-trust-") : Path.of("/run/sallyport/trust");
        Files.createDirectories(base);
        Path dir = dryRun ? base : Files.createTempDirectory(base, "run-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        TrustFiles.write(dir, CaExport.pem(ca.certificate(), false));
        return dir;
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }
}
