package dev.sallyport.sandbox.vm;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.sandbox.internal.TrustFiles;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The VM backend's whole run, as {@code sallyport run --backend nerdctl} makes it: a network of its own, the trust
 * files where containerd can read them, the proxy on the network's gateway (started by the caller's
 * {@link ProxyHook} once the bridge exists), then the workload ({@link VmRunner}). The trust files are removed after
 * the run; a dry run writes them to a temporary folder instead, removed once the plan is printed.
 */
public final class VmSandbox {

    /** The port the proxy listens on at the gateway address. */
    public static final int PROXY_PORT = 3128;
    private static final Path TRUST_ROOT = Path.of("/run/sallyport/trust");

    private VmSandbox() {
    }

    /**
     * What to run in the guest.
     *
     * @param runtime   kata, runc or runsc
     * @param image     the image reference
     * @param command   the workload's argv
     * @param workspace the host folder mounted read-write at {@link GuestEnvironment#WORKSPACE}
     * @param secrets   secret name to placeholder
     * @param dryRun    print every command and run none (the proxy is not started)
     * @param nerdctl   the nerdctl program (a name on the PATH or a path)
     * @param literals  whether TCP to literal addresses goes to the proxy too (the policy's
     *                  {@code network.literal_addresses})
     * @param capture   whether the guest's DNS and captured TCP go to the proxy at all (off: {@code --no-capture})
     */
    public record Workload(VmRuntime runtime, String image, List<String> command, Path workspace,
                           Map<String, String> secrets, boolean dryRun, String nerdctl, LiteralAddresses literals,
                           boolean capture) {
        public Workload {
            Objects.requireNonNull(runtime, "runtime");
            Objects.requireNonNull(image, "image");
            command = List.copyOf(command);
            Objects.requireNonNull(workspace, "workspace");
            secrets = Map.copyOf(secrets);
            Objects.requireNonNull(nerdctl, "nerdctl");
            Objects.requireNonNull(literals, "literals");
        }

        /** A workload whose literal addresses are not captured ({@link LiteralAddresses#NO_ROUTE}). */
        public Workload(VmRuntime runtime, String image, List<String> command, Path workspace,
                        Map<String, String> secrets, boolean dryRun, String nerdctl) {
            this(runtime, image, command, workspace, secrets, dryRun, nerdctl, LiteralAddresses.NO_ROUTE);
        }

        /** A capturing workload, literal addresses as {@code literals} says. */
        public Workload(VmRuntime runtime, String image, List<String> command, Path workspace,
                        Map<String, String> secrets, boolean dryRun, String nerdctl, LiteralAddresses literals) {
            this(runtime, image, command, workspace, secrets, dryRun, nerdctl, literals, true);
        }

        @Override
        public String toString() {
            return "Workload[" + runtime.cliName() + ", " + image + ", " + command + ", " + workspace + ", secrets="
                    + secrets.keySet() + ", dryRun=" + dryRun + ", " + nerdctl + ", " + literals
                    + (capture ? "" : ", no capture") + "]";
        }
    }

    /**
     * {@code options} for the run's own proxy on {@code network}'s gateway: the explicit listener on the proxy port,
     * and the transparent listener and DNS stub that the network's table DNATs the guest's TCP to synthetic addresses
     * and its DNS to (original destinations from the host's connection tracking; AAAA answered empty, the bridge has
     * no IPv6). Without capture ({@link SandboxNetwork#capture()}) only the explicit listener.
     */
    public static ProxyOptions proxyOn(SandboxNetwork network, ProxyOptions options) {
        String gateway = network.gateway();
        ProxyOptions explicit = options.withListen(new HostPort(gateway, network.proxyPort()));
        if (!network.capture()) {
            return explicit;
        }
        return explicit.withCapture(ProxyOptions.Capture.redirected(new HostPort(gateway, network.dnsPort()),
                        new HostPort(gateway, network.transparentPort())));
    }

    /**
     * Runs {@code workload} trusting {@code caPem} (the proxy's CA) and returns its exit status; plans, warnings
     * and a dry run's commands go to {@code out}.
     */
    public static int run(Workload workload, byte[] caPem, PrintStream out, ProxyHook proxy)
            throws IOException, VmRunException {
        Path trustDir = trustFiles(caPem, workload.dryRun());
        try {
            SandboxNetwork network = SandboxNetwork.allocate(PROXY_PORT).withLiterals(workload.literals())
                    .withCapture(workload.capture());
            NerdctlSpec spec = NerdctlSpec.of(network, workload.runtime(), workload.image(), workload.command(),
                            workload.workspace(), UserIds.caller(workload.workspace()),
                            trustDir.resolve(TrustFiles.BUNDLE))
                    .withJavaTrustStore(trustDir.resolve(TrustFiles.P12))
                    .withSecrets(workload.secrets())
                    .with(ResourceLimits.DEFAULTS, isTerminal(), workload.nerdctl());
            return VmRunner.run(spec, workload.dryRun(), out, proxy);
        } finally {
            out.flush();
            deleteTree(trustDir);
        }
    }

    /** The CA bundle and Java trust store, in a root-owned folder under /run that containerd can read. */
    private static Path trustFiles(byte[] caPem, boolean dryRun) throws IOException {
        Path dir;
        if (dryRun) {
            dir = Files.createTempDirectory("sallyport-trust-");
        } else {
            Files.createDirectories(TRUST_ROOT);
            dir = Files.createTempDirectory(TRUST_ROOT, "run-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        }
        TrustFiles.write(dir, caPem);
        return dir;
    }

    /** Whether this process talks to a terminal: a console that is one (JDK 22-24 give a console to pipes too). */
    @SuppressWarnings("SystemConsoleNull")     // isTerminal() decides; null is a JVM without any console
    private static boolean isTerminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
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
