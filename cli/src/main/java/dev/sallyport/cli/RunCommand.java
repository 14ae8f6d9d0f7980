package dev.sallyport.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Identities;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.SandboxSettings;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.sandbox.ResourceLimits;
import dev.sallyport.sandbox.SandboxRun;
import dev.sallyport.sandbox.ScratchFolders;
import dev.sallyport.sandbox.StartTrace;
import dev.sallyport.sandbox.WritableFolders;
import dev.sallyport.sandbox.vm.VmRuntime;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport run [options] -- COMMAND [ARGS...]}: runs COMMAND with only the workspace writable, the proxy's
 * CA trusted and the proxy as its only way out. By default it starts its own proxy on loopback with a fresh CA
 * whose key never touches disk, and writes the audit log under the state directory (outside the sandbox's reach).
 * This class maps the flags to a {@link SandboxRun}, which does the run.
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
            description = "Pass this host variable through (nothing else from the host environment is visible); "
                    + "JAVA_TOOL_OPTIONS is put before the sandbox's own options, which win.")
    List<String> passEnv = new ArrayList<>();

    @Option(names = "--allow-read", paramLabel = "PATH", split = ",",
            description = "process backend: also show this host path read-only (e.g. the agent's install folder).")
    List<Path> allowRead = new ArrayList<>();

    @Option(names = "--allow-write", paramLabel = "PATH", split = ",",
            description = "process backend: also let COMMAND write this host path (e.g. a tool's cache folder).")
    List<Path> allowWrite = new ArrayList<>();

    @Option(names = "--scratch", paramLabel = "PATH", split = ",",
            description = "process backend: show this host folder writable, every change thrown away after the run "
                    + "(e.g. a tool's config folder it must write to start).")
    List<Path> scratch = new ArrayList<>();

    @Option(names = "--proxy", paramLabel = "HOST:PORT", description = "Use this running proxy instead of starting one.")
    String proxyAddress;

    @Option(names = "--proxy-admin", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:9901",
            description = "With --proxy: the running proxy's admin listener, where the sandbox registers "
                    + "(default: ${DEFAULT-VALUE}).")
    String proxyAdmin;

    @Option(names = "--proxy-token", paramLabel = "FILE",
            description = "With --proxy: the file holding the proxy's admin token; the sandbox registers with the "
                    + "proxy under --identity (default: $SALLYPORT_HOME/admin-token when it exists; without a token "
                    + "the sandbox is anonymous to the proxy).")
    Path proxyToken;

    @Option(names = "--identity", paramLabel = "NAME",
            description = "With --proxy: the sandbox's identity on the proxy, in every audit record (default: run-PID).")
    String identity;

    @Option(names = "--proxy-policy", paramLabel = "NAME",
            description = "With --proxy: the name the proxy's clients: lists match for this sandbox (default: --identity).")
    String proxyPolicy;

    @Option(names = "--lease", paramLabel = "SECONDS", defaultValue = "60",
            description = "With --proxy: how long the proxy keeps the registration without a renewal (renewed every "
                    + "third of it while the run lasts; default: ${DEFAULT-VALUE}).")
    long leaseSeconds;

    @Option(names = "--ca-cert", paramLabel = "FILE",
            description = "With --proxy: the running proxy's CA certificate (default: $SALLYPORT_HOME/ca/ca.pem).")
    Path caCert;

    @Option(names = "--audit", paramLabel = "FILE",
            description = "Audit log of the run's own proxy (default: the policy's audit.path when it names a file "
                    + "outside the workspace, else $SALLYPORT_HOME/runs/run-TIMESTAMP.jsonl).")
    Path auditFile;

    @Option(names = "--require-landlock", description = "Fail unless the kernel enforces every protection: Landlock's "
            + "file-system and TCP rules (ABI 4+) and host unix sockets kept out (ABI 9+, or the connect supervisor).")
    boolean requireLandlock;

    @Option(names = "--git-read-only", description = "The whole .git read-only (no commit, fetch or checkout inside); "
            + "by default .git is writable and only its hooks, config and redirections are read-only.")
    boolean gitReadOnly;

    /** The default since .git became writable; kept so that existing scripts still run. */
    @Option(names = "--git-writable", hidden = true)
    boolean gitWritable;

    @Option(names = "--no-capture", description = "No DNS and no transparent capture: only clients that use the "
            + "proxy variables get out (VM backend: the host table translates nothing and lets the guest reach only "
            + "the proxy port on the gateway).")
    boolean noCapture;

    @Option(names = "--package-cache", description = "process backend: keep package caches (~/.m2/repository, "
            + "~/.npm, ~/.cache/pip, Go's, cargo's, Gradle's) between runs of this workspace, in "
            + "$SALLYPORT_HOME/caches/NAME-HASH (this workspace's only).")
    boolean packageCache;

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

    @Override
    public Integer call() throws Exception {
        StartTrace.mark("run parsed");
        // The workload owns the terminal: the run's proxy only speaks up for warnings (the audit log has the rest).
        System.setProperty("org.slf4j.simpleLogger.log.dev.sallyport.proxy", "warn");
        Policy policy = FollowedPolicy.load("--policy", policyFile);
        StartTrace.mark("policy loaded");
        Path workspace = (workdir == null ? Path.of("") : workdir).toAbsolutePath().normalize();
        if (!Files.isDirectory(workspace)) {
            throw new UsageException("--workdir: " + workspace + " is not a folder (expected: an existing folder)");
        }
        SandboxRun.Builder run = SandboxRun.builder(command, workspace).policy(policy);
        secrets.forEach(run::secret);
        switch (backend) {
            case "process" -> {
                ResourceLimits limits = limits();
                Optional<Path> caches = packageCache ? Optional.of(StateDirectory.resolve()) : Optional.empty();
                Path startupCache = StateDirectory.resolve().resolve("startup");
                List<Path> scratchFolders = new ArrayList<>(checkedScratch("--scratch", scratch, workspace));
                for (Path p : checkedScratch("sandbox.scratch", policyScratch(policy), workspace)) {
                    if (!scratchFolders.contains(p)) {
                        scratchFolders.add(p);
                    }
                }
                run.proxy(proxy(policy, workspace)).backend(new SandboxRun.Backend.Process(sandbox -> {
                    sandbox.limits(limits).requireLandlock(requireLandlock)
                            .gitWritable(!gitReadOnly && policy.sandbox().git() == SandboxSettings.GitAccess.WRITABLE)
                            .hostEnv(System.getenv()).startupCache(startupCache);
                    policy.sandbox().hold().forEach(sandbox::hold);
                    caches.ifPresent(sandbox::packageCaches);
                    passEnv.forEach(sandbox::passEnv);
                    allowRead.forEach(sandbox::readOnly);
                    allowWrite.forEach(sandbox::readWrite);
                    scratchFolders.forEach(sandbox::scratch);
                }, !noCapture));
            }
            // the VM backend starts its own proxy on the sandbox network's gateway, audited where the policy says, or
            // with --proxy registers with a shared one and relays to it from the gateway
            case "nerdctl" -> {
                if (!scratch.isEmpty()) {
                    throw new UsageException("--scratch: not with --backend nerdctl (expected: the process backend; "
                            + "the VM's home folder is its own tmpfs, writable and thrown away already)");
                }
                run.proxy(proxyAddress == null ? new SandboxRun.ProxyMode.Own(Optional.empty())
                    .withPlaceholderKeysIn(StateDirectory.resolve()) : attachedVm(policy, workspace)).backend(nerdctl());
            }
            default -> throw new UsageException("--backend: '" + backend + "' (expected: process or nerdctl)");
        }
        var cli = spec.commandLine();
        return build(run).run(WriterStream.over(cli.getOut()), WriterStream.over(cli.getErr()));
    }

    /**
     * {@code --proxy} and {@code --ca-cert}, or the run's own proxy with {@code --audit}, else with the policy's
     * {@code audit.path} when it names a file the command cannot write, else with one under the state folder.
     */
    private SandboxRun.ProxyMode proxy(Policy policy, Path workspace) throws IOException {
        if (proxyAddress != null) {
            HostPort target = HostPort.parse(proxyAddress);
            InetSocketAddress address = new InetSocketAddress(target.host(), target.port());
            Path state = StateDirectory.resolve();
            byte[] ca = Files.readAllBytes(caCert != null ? caCert
                    : state.resolve("ca").resolve(CertificateAuthority.CERT_FILE));
            Path tokenFile = proxyToken != null ? proxyToken : state.resolve("admin-token");
            if (proxyToken == null && identity == null && !Files.isReadable(tokenFile)) {
                spec.commandLine().getErr().println("sallyport: not registered with the proxy at " + proxyAddress
                        + " (no admin token: --proxy-token FILE): the sandbox is anonymous there");
                return new SandboxRun.ProxyMode.Running(address, ca, state);
            }
            String token;
            try {
                token = Files.readString(tokenFile).strip();
            } catch (IOException e) {
                throw new UsageException("--proxy-token: cannot read " + tokenFile + ": " + e.getClass().getSimpleName()
                        + " (expected: a readable file holding the proxy's admin token)");
            }
            HostPort admin = HostPort.parse(proxyAdmin);
            String name = identity != null ? identity : "run-" + ProcessHandle.current().pid();
            if (!Identities.isValidName(name) || name.equals(Identities.ANONYMOUS)) {
                throw new UsageException("--identity: '" + name + "' (expected: " + Identities.EXPECTED + ", not "
                        + Identities.ANONYMOUS + ")");
            }
            if (proxyPolicy != null && !Identities.isValidName(proxyPolicy)) {
                throw new UsageException("--proxy-policy: '" + proxyPolicy + "' (expected: " + Identities.EXPECTED + ")");
            }
            if (leaseSeconds < 3 || leaseSeconds > 86_400) {
                throw new UsageException("--lease: " + leaseSeconds + " (expected: 3..86400 seconds)");
            }
            if (token.isEmpty()) {
                throw new UsageException("--proxy-token: " + tokenFile + " is empty (expected: the proxy's admin token)");
            }
            return new SandboxRun.ProxyMode.Attached(address, ca, new InetSocketAddress(admin.host(), admin.port()),
                    token, name, Optional.ofNullable(proxyPolicy), Duration.ofSeconds(leaseSeconds));
        }
        return ownProxy(policy, workspace).withPlaceholderKeysIn(StateDirectory.resolve());   // same placeholders every run
    }

    /** {@code --proxy} for the VM backend: only registered (its relay on the gateway presents the identity). */
    private SandboxRun.ProxyMode attachedVm(Policy policy, Path workspace) throws IOException {
        SandboxRun.ProxyMode mode = proxy(policy, workspace);
        if (!(mode instanceof SandboxRun.ProxyMode.Attached)) {
            throw new UsageException("--proxy: with --backend nerdctl the sandbox must register with the proxy "
                    + "(expected: --proxy-token FILE with the proxy's admin token, or --identity NAME)");
        }
        return mode;
    }

    /** The run's own proxy: its audit log where {@link #proxy} says. */
    private SandboxRun.ProxyMode.Own ownProxy(Policy policy, Path workspace) throws IOException {
        if (auditFile != null) {
            return new SandboxRun.ProxyMode.Own(Optional.of(auditFile));
        }
        if (policy.audit().isStdout()) {
            return SandboxRun.ProxyMode.Own.auditUnder(StateDirectory.resolve());
        }
        Path audit = Path.of(policy.audit().path()).toAbsolutePath().normalize();
        List<Path> writable = new ArrayList<>(List.of(workspace));
        writable.addAll(allowWrite);
        Optional<Path> inside = WritableFolders.holding(audit, writable);
        if (inside.isEmpty()) {
            return new SandboxRun.ProxyMode.Own(Optional.of(audit));
        }
        SandboxRun.ProxyMode.Own own = SandboxRun.ProxyMode.Own.auditUnder(StateDirectory.resolve());
        spec.commandLine().getErr().println("sallyport: the policy's audit.path " + audit + " is inside " + inside.get()
                + ", which the command can write: the run's audit log goes to " + own.audit().orElseThrow()
                + " instead (--audit FILE chooses another)");
        return own;
    }

    private SandboxRun.Backend.Nerdctl nerdctl() {
        if (image == null || image.isBlank()) {
            throw new UsageException("--image: missing (expected: the container image to run, with --backend nerdctl)");
        }
        try {
            return new SandboxRun.Backend.Nerdctl(VmRuntime.parse(runtime), image, dryRun, "nerdctl", !noCapture,
                    gitReadOnly);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--runtime: '" + runtime + "' (expected: kata, runc or runsc)");
        }
    }

    /**
     * The policy's {@code sandbox.scratch} folders that exist on this host ({@code ~/} is the home folder): one that
     * does not exist has nothing to show, and the tool that wants it can make it in the sandbox's own home.
     */
    private static List<Path> policyScratch(Policy policy) {
        Path home = Path.of(System.getProperty("user.home"));
        List<Path> out = new ArrayList<>();
        for (String item : policy.sandbox().scratch()) {
            Path p = item.startsWith("~/") ? home.resolve(item.substring(2)) : Path.of(item);
            if (Files.exists(p)) {
                out.add(p.normalize());
            }
        }
        return out;
    }

    /**
     * {@code paths} (from {@code field}: {@code --scratch}, or a policy key) checked as scratch folders of a run in
     * {@code workspace} ({@link ScratchFolders#check}); a bad one is a usage error in one line naming {@code field}.
     */
    private static List<Path> checkedScratch(String field, List<Path> paths, Path workspace) {
        Path home = Path.of(System.getProperty("user.home"));
        for (Path p : paths) {
            try {
                ScratchFolders.check(field, p, workspace, home, StateDirectory.resolve());
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        return List.copyOf(paths);
    }

    /** The run; a secret the policy does not have is a usage error naming {@code --secret}. */
    private static SandboxRun build(SandboxRun.Builder run) {
        try {
            return run.build();
        } catch (IllegalArgumentException e) {
            String message = String.valueOf(e.getMessage());
            if (message.startsWith("secrets: ")) {
                throw new UsageException("--secret: " + message.substring("secrets: ".length()));
            }
            if (message.startsWith("policy: ")) {
                throw new UsageException("--policy: " + message.substring("policy: ".length()));
            }
            throw e;
        }
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
}
