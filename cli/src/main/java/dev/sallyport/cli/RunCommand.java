package dev.sallyport.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.AuditSettings;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.sandbox.ProcessSandbox;
import dev.sallyport.sandbox.ResourceLimits;
import dev.sallyport.sandbox.SandboxSpec;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport run [options] -- COMMAND [ARGS...]}: runs COMMAND with only the workspace writable, the proxy's
 * CA trusted and the proxy as its only way out. By default it starts its own proxy on loopback with a fresh CA
 * whose key never touches disk, and writes the audit log under the state directory (outside the sandbox's reach).
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run COMMAND sandboxed: only the workspace writable, the proxy's CA trusted, the proxy the only way out.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"N:COMMAND's exit status (128+S when signal S ended it)", "1:the sandbox could not start",
            "2:bad arguments or policy"})
public final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--policy", paramLabel = "FILE", description = "Policy file (default: built-in deny-all policy).")
    Path policyFile;

    @Option(names = "--backend", paramLabel = "B", defaultValue = "process",
            description = "process (user namespaces, Landlock, seccomp) or nerdctl (containers, Kata VMs). Default: ${DEFAULT-VALUE}.")
    String backend;

    @Option(names = "--runtime", paramLabel = "R", defaultValue = "kata",
            description = "nerdctl backend: kata, runc or runsc (default: ${DEFAULT-VALUE}).")
    String runtime;

    @Option(names = "--image", paramLabel = "IMAGE", description = "nerdctl backend: the container image.")
    String image;

    @Option(names = "--workdir", paramLabel = "DIR", description = "The workspace, the only writable folder (default: the current folder).")
    Path workdir;

    @Option(names = "--secret", paramLabel = "NAME", split = ",",
            description = "Give the sandbox these secrets' placeholders (default: every secret of the policy).")
    List<String> secrets = new ArrayList<>();

    @Option(names = "--env", paramLabel = "NAME", split = ",",
            description = "Pass this host variable through (nothing else from the host environment is visible).")
    List<String> passEnv = new ArrayList<>();

    @Option(names = "--allow-read", paramLabel = "PATH", split = ",",
            description = "process backend: also show this host path read-only (e.g. the agent's install folder).")
    List<Path> allowRead = new ArrayList<>();

    @Option(names = "--allow-write", paramLabel = "PATH", split = ",",
            description = "process backend: also let COMMAND write this host path (e.g. a tool's cache folder).")
    List<Path> allowWrite = new ArrayList<>();

    @Option(names = "--proxy", paramLabel = "HOST:PORT", description = "Use this running proxy instead of starting one.")
    String proxyAddress;

    @Option(names = "--ca-cert", paramLabel = "FILE",
            description = "With --proxy: the running proxy's CA certificate (default: $SALLYPORT_HOME/ca/ca.pem).")
    Path caCert;

    @Option(names = "--audit", paramLabel = "FILE",
            description = "Audit log of the run's own proxy (default: $SALLYPORT_HOME/runs/run-TIMESTAMP.jsonl).")
    Path auditFile;

    @Option(names = "--require-landlock", description = "Fail unless the kernel enforces every protection: Landlock's "
            + "file-system and TCP rules (ABI 4+) and host unix sockets kept out (ABI 9+, or the connect supervisor).")
    boolean requireLandlock;

    @Option(names = "--git-writable", description = "Let COMMAND commit: .git writable, its hooks and config still read-only.")
    boolean gitWritable;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "8g",
            description = "process backend: memory of the whole sandbox, tmpfs contents included, where a cgroup can be "
                    + "made (else of each process). Default: ${DEFAULT-VALUE}.")
    String memory;

    @Option(names = "--pids", paramLabel = "N", defaultValue = "4096",
            description = "process backend: processes and threads of the whole sandbox. Default: ${DEFAULT-VALUE}.")
    int pids;

    @Option(names = "--tmpfs-size", paramLabel = "SIZE", defaultValue = "2g",
            description = "process backend: size of each memory-backed folder (/tmp, /dev/shm, HOME). Default: ${DEFAULT-VALUE}.")
    String tmpfsSize;

    @Option(names = "--dry-run", description = "nerdctl backend: print every command (nerdctl, nft, ip) and run none.")
    boolean dryRun;

    @Parameters(paramLabel = "COMMAND", arity = "1..*", description = "The command and its arguments (after --).")
    List<String> command;

    /** With the run's own proxy, placeholders derive from a key that lives only in this process. */
    private final Placeholders runPlaceholders = Placeholders.ephemeral();

    @Override
    public Integer call() throws Exception {
        // The workload owns the terminal: the run's proxy only speaks up for warnings (the audit log has the rest).
        System.setProperty("org.slf4j.simpleLogger.log.dev.sallyport.proxy", "warn");
        Policy policy = FollowedPolicy.load("--policy", policyFile);
        Path workspace = (workdir == null ? Path.of("") : workdir).toAbsolutePath().normalize();
        if (!Files.isDirectory(workspace)) {
            throw new UsageException("--workdir: " + workspace + " is not a folder (expected: an existing folder)");
        }
        return switch (backend) {
            case "process" -> runProcess(policy, workspace);
            case "nerdctl" -> new VmRun(spec, policy, workspace, runtime, image, command, dryRun, runPlaceholders)
                    .run(placeholdersFor(policy, true));
            default -> throw new UsageException("--backend: '" + backend + "' (expected: process or nerdctl)");
        };
    }

    private int runProcess(Policy policy, Path workspace) throws Exception {
        ResourceLimits limits = limits();
        if (proxyAddress != null) {
            HostPort target = HostPort.parse(proxyAddress);
            InetSocketAddress proxy = new InetSocketAddress(target.host(), target.port());
            byte[] ca = Files.readAllBytes(caCert != null ? caCert
                    : StateDirectory.resolve().resolve("ca").resolve(CertificateAuthority.CERT_FILE));
            return ProcessSandbox.run(sandbox(workspace, proxy, ca, placeholdersFor(policy, false), limits));
        }
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport run CA");
        Path audit = auditPath();
        Policy runPolicy = withAudit(policy, audit);
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(runPolicy).withCa(ca)
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withPlaceholders(runPlaceholders))) {
            var err = spec.commandLine().getErr();
            err.printf("sallyport: sandbox proxy on 127.0.0.1:%d, audit log %s%n", proxy.address().getPort(), audit);
            err.flush();
            byte[] caPem = CaExport.pem(ca.certificate(), false);
            return ProcessSandbox.run(sandbox(workspace, proxy.address(), caPem, placeholdersFor(policy, true), limits));
        }
    }

    private SandboxSpec sandbox(Path workspace, InetSocketAddress proxy, byte[] caPem, Map<String, String> placeholders,
                                ResourceLimits limits) {
        SandboxSpec.Builder builder = SandboxSpec.builder(command, workspace, proxy, caPem)
                .limits(limits)
                .requireLandlock(requireLandlock)
                .gitWritable(gitWritable)
                .hostEnv(System.getenv());
        passEnv.forEach(builder::passEnv);
        allowRead.forEach(builder::readOnly);
        allowWrite.forEach(builder::readWrite);
        placeholders.forEach(builder::placeholder);
        return builder.build();
    }

    /** The flags' limits; a bad value is a usage error naming its flag. */
    private ResourceLimits limits() {
        try {
            return ResourceLimits.defaults().withMemory(ResourceLimits.parseSize("--memory", memory)).withPids(pids)
                    .withTmpfs(ResourceLimits.parseSize("--tmpfs-size", tmpfsSize));
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            throw new UsageException(message.startsWith("--") ? message : "--" + message);
        }
    }

    /** Secret name to placeholder for the secrets the sandbox gets; ephemeral with the run's own proxy. */
    private Map<String, String> placeholdersFor(Policy policy, boolean ownProxy) throws IOException {
        Map<String, String> all = ownProxy ? runPlaceholders.all(policy)
                : Placeholders.forPolicy(policy, StateDirectory.resolve());
        Map<String, String> chosen = new LinkedHashMap<>();
        for (String name : secrets) {
            if (!all.containsKey(name)) {
                throw new UsageException("--secret: '" + name + "' is not a secret of the policy (expected: one of "
                        + String.join(", ", all.keySet()) + ")");
            }
            chosen.put(name, all.get(name));
        }
        return secrets.isEmpty() ? all : chosen;
    }

    private Path auditPath() throws IOException {
        if (auditFile != null) {
            return auditFile.toAbsolutePath();
        }
        Path runs = StateDirectory.resolve().resolve("runs");
        Files.createDirectories(runs, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(Instant.now());
        return runs.resolve("run-" + stamp + "-" + ProcessHandle.current().pid() + ".jsonl");
    }

    static Policy withAudit(Policy p, Path audit) {
        return new Policy(p.proxy(), p.ca(), new AuditSettings(audit.toString()), p.mode(), p.upstream(), p.network(),
                p.rules(), p.secrets(), p.source());
    }
}
