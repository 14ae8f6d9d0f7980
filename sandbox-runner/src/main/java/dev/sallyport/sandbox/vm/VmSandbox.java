package dev.sallyport.sandbox.vm;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.sandbox.Held;
import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.internal.AfterRunCheck;
import dev.sallyport.sandbox.internal.HeldNames;
import dev.sallyport.sandbox.internal.ProtectedPaths;
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
     * How the workspace is guarded, the same way as in the process backend: with {@code gitWritable} every
     * repository's {@code .git} is writable but for its hooks, config and redirections (mounted read-only over the
     * workspace); the editor and agent configs are read-only; after the run the repositories made in it are
     * neutralised and the tool configs named in {@code hold} (on top of the built-in table) are held back in
     * {@code heldStore}.
     */
    public record Guard(boolean gitWritable, List<String> hold, Path heldStore) {
        public Guard {
            hold = List.copyOf(hold);
            Objects.requireNonNull(heldStore, "heldStore");
        }

        /** .git writable, the built-in table, the state directory's store. */
        public static Guard defaults() {
            return new Guard(true, List.of(),
                    dev.sallyport.policy.StateDirectory.resolve().resolve(dev.sallyport.sandbox.Held.FOLDER));
        }
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
     * @param guard     how the workspace is guarded: as the process backend does it ({@link Guard})
     */
    public record Workload(VmRuntime runtime, String image, List<String> command, Path workspace,
                           Map<String, String> secrets, boolean dryRun, String nerdctl, LiteralAddresses literals,
                           boolean capture, Guard guard) {
        public Workload {
            Objects.requireNonNull(runtime, "runtime");
            Objects.requireNonNull(image, "image");
            command = List.copyOf(command);
            Objects.requireNonNull(workspace, "workspace");
            secrets = Map.copyOf(secrets);
            Objects.requireNonNull(nerdctl, "nerdctl");
            Objects.requireNonNull(literals, "literals");
            Objects.requireNonNull(guard, "guard");
        }

        /** A workload with the default guard ({@link Guard#defaults()}). */
        public Workload(VmRuntime runtime, String image, List<String> command, Path workspace,
                        Map<String, String> secrets, boolean dryRun, String nerdctl, LiteralAddresses literals,
                        boolean capture) {
            this(runtime, image, command, workspace, secrets, dryRun, nerdctl, literals, capture, Guard.defaults());
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
        ProtectedPaths.Plan plan;
        try {
            plan = ProtectedPaths.prepare(workload.workspace(), workload.guard().gitWritable(),
                    HeldNames.with(workload.guard().hold()), Held.of(workload.guard().heldStore(),
                            workload.workspace()));
        } catch (SandboxException e) {
            deleteTree(trustDir);
            throw new VmRunException(e.getMessage(), e);
        }
        try {
            SandboxNetwork network = SandboxNetwork.allocate(PROXY_PORT).withLiterals(workload.literals())
                    .withCapture(workload.capture());
            NerdctlSpec spec = NerdctlSpec.of(network, workload.runtime(), workload.image(), workload.command(),
                            workload.workspace(), UserIds.caller(workload.workspace()),
                            trustDir.resolve(TrustFiles.BUNDLE))
                    .withJavaTrustStore(trustDir.resolve(TrustFiles.P12))
                    .withSecrets(workload.secrets())
                    .with(ResourceLimits.DEFAULTS, isTerminal(), workload.nerdctl())
                    .withGuarded(guarded(plan));
            return VmRunner.run(spec, workload.dryRun(), out, proxy);
        } finally {
            // a dry run started nothing: only the masks go; a run is checked once the guest is gone
            List<String> lines = workload.dryRun() ? removeMasks(plan) : AfterRunCheck.run(plan);
            lines.forEach(line -> out.println("sallyport: " + line));
            out.flush();
            deleteTree(trustDir);
        }
    }

    /** The plan's mounts over the workspace: the pinned folders, then the read-only entries. */
    static List<NerdctlSpec.Guarded> guarded(ProtectedPaths.Plan plan) {
        List<NerdctlSpec.Guarded> out = new java.util.ArrayList<>();
        plan.pinnedPaths().forEach(p -> out.add(new NerdctlSpec.Guarded(p, false)));
        plan.readOnlyPaths().forEach(p -> out.add(new NerdctlSpec.Guarded(p, true)));
        return out;
    }

    private static List<String> removeMasks(ProtectedPaths.Plan plan) {
        ProtectedPaths.removeMasks(plan);
        return List.of();
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
