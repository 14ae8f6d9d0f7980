package dev.sallyport.sandbox;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.sandbox.vm.VmRuntime;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One {@code sallyport run}: a command, its workspace, the policy, which of the policy's secrets it gets as
 * placeholders, the proxy it goes through (its own, started for the run, or one already running) and the backend
 * that confines it. {@link #run(PrintStream, PrintStream)} does the whole run and returns the command's exit status.
 *
 * @param command the command and its arguments (non-empty)
 * @param workdir the workspace, the only folder the command may write (absolute, normalized)
 * @param policy  what the run's own proxy enforces, and whose secrets the command gets placeholders of
 * @param secrets the secrets whose placeholders the command gets, in this order; empty: every secret of the policy
 * @param proxy   the run's own proxy or a running one
 * @param backend the process sandbox or the VM backend
 */
public record SandboxRun(List<String> command, Path workdir, Policy policy, List<String> secrets, ProxyMode proxy,
                         Backend backend) {

    public SandboxRun {
        command = List.copyOf(command);
        if (command.isEmpty() || command.getFirst().isEmpty()) {
            throw new IllegalArgumentException("command: empty (expected: a program and its arguments)");
        }
        workdir = Objects.requireNonNull(workdir, "workdir").toAbsolutePath().normalize();
        Objects.requireNonNull(policy, "policy");
        secrets = List.copyOf(secrets);
        Objects.requireNonNull(proxy, "proxy");
        if (proxy instanceof ProxyMode.Attached attached && !policy.secrets().isEmpty()) {
            throw new IllegalArgumentException("policy: secrets in the run's policy with sandbox " + attached.identity()
                    + " attached to a shared proxy (expected: rules only; the proxy's own policy holds the secrets "
                    + "and binds them with clients: [" + attached.policy().orElse(attached.identity()) + "])");
        }
        List<String> known = policy.secrets().stream().map(SecretSpec::name).toList();
        for (String name : proxy instanceof ProxyMode.Attached ? List.<String>of() : secrets) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException("secrets: '" + name + "' is not a secret of the policy (expected: "
                        + "one of " + String.join(", ", known) + ")");
            }
        }
        Objects.requireNonNull(backend, "backend");
        if (backend instanceof Backend.Nerdctl && proxy instanceof ProxyMode.Running) {
            throw new IllegalArgumentException("proxy: a running proxy the sandbox is not registered with, with the "
                    + "nerdctl backend (expected: the run's own proxy on the sandbox network's gateway, or a shared proxy "
                    + "the run registers with, reached through the gateway's relay)");
        }
    }

    /** A run of {@code command} in {@code workdir}: deny-all policy, every secret, its own proxy, the process sandbox. */
    public static Builder builder(List<String> command, Path workdir) {
        return new Builder(command, workdir);
    }

    /**
     * Does the whole run: starts the run's own proxy when it has one, sets the sandbox up, runs the command with the
     * caller's stdio, tears everything down and returns the command's exit status (128+N for signal N). Notices
     * ({@code sallyport: ...}) go to {@code err}; the VM backend's plan and warnings to {@code out}.
     *
     * @throws SandboxException the process sandbox could not start (one line)
     * @throws dev.sallyport.sandbox.vm.VmRunException the VM backend could not start (one line)
     * @throws Exception what starting the proxy throws, e.g. a secret that cannot be read
     */
    public int run(PrintStream out, PrintStream err) throws Exception {
        return new RunSteps(this, out, err).run();
    }

    /** Which proxy the run goes through. */
    public sealed interface ProxyMode {

        /**
         * A proxy started in this JVM for the run and stopped after it: a fresh CA whose key never touches disk; the
         * process sandbox's on {@code 127.0.0.1}, the VM backend's on its network's gateway. Placeholders come from
         * the key in {@code placeholderKeys} (a state directory's {@code placeholder.key}, created on first use), so
         * a token a tool saved in one run still works in the next; without it, from a key that lives only in this
         * JVM (new placeholders every run). Either way the policy's secrets the run does not give the command get
         * placeholders of this run only, which no one knows: one saved by an earlier run that had them is refused
         * ({@code secret_unknown_placeholder}).
         *
         * @param audit           the file its audit log goes to; empty: where the policy says
         * @param placeholderKeys the state directory whose placeholder key the run uses; empty: a key of its own
         */
        record Own(Optional<Path> audit, Optional<Path> placeholderKeys) implements ProxyMode {
            public Own {
                audit = audit.map(Path::toAbsolutePath);
                placeholderKeys = placeholderKeys.map(Path::toAbsolutePath);
            }

            /** Placeholders from a key of the run's own. */
            public Own(Optional<Path> audit) {
                this(audit, Optional.empty());
            }

            /** The same, with placeholders from the key in {@code stateDirectory}: the same in every run. */
            public Own withPlaceholderKeysIn(Path stateDirectory) {
                return new Own(audit, Optional.of(stateDirectory));
            }

            /**
             * An audit log of its own under the state directory ({@code runs/run-TIMESTAMP-PID.jsonl}, the folder made
             * owner-only): outside the sandbox's reach.
             */
            public static Own auditUnder(Path stateDirectory) throws IOException {
                Path runs = stateDirectory.resolve("runs");
                Files.createDirectories(runs,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                String stamp = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC)
                        .format(Instant.now());
                return new Own(Optional.of(runs.resolve("run-" + stamp + "-" + ProcessHandle.current().pid()
                        + ".jsonl")));
            }
        }

        /**
         * A proxy already running on the host's loopback (process sandbox only). Placeholders are derived from the
         * key in {@code stateDirectory}, the one such a proxy uses.
         *
         * @param address        where it listens
         * @param caPem          its CA certificate, PEM
         * @param stateDirectory the state directory it shares with this run
         */
        record Running(InetSocketAddress address, byte[] caPem, Path stateDirectory) implements ProxyMode {
            public Running {
                Objects.requireNonNull(address, "address");
                caPem = caPem.clone();
                Objects.requireNonNull(stateDirectory, "stateDirectory");
            }

            @Override
            public byte[] caPem() {
                return caPem.clone();
            }

            @Override
            public boolean equals(Object other) {
                return other instanceof Running r && r.address.equals(address)
                        && Arrays.equals(r.caPem, caPem) && r.stateDirectory.equals(stateDirectory);
            }

            @Override
            public int hashCode() {
                return Objects.hash(address, Arrays.hashCode(caPem), stateDirectory);
            }

            @Override
            public String toString() {
                return "Running[" + address + ", caPem=" + caPem.length + " bytes, " + stateDirectory + "]";
            }
        }

        /**
         * A shared proxy the sandbox registers with for the run: through {@code admin} with
         * the proxy's admin token, as {@code identity} (what every audit record of the sandbox names), its rules and
         * secrets matched as {@code policy} (default: the identity), the run's policy file giving its own rules, for
         * a {@code lease} renewed while the run lasts and forgotten after. The sandbox gets the placeholders the
         * proxy answers, and its relay presents the registration's token on every connection: the proxy knows it
         * by that alone, never by anything the workload sends. The process sandbox's relay is the host end of its
         * socket; the VM backend's is on its bridge's gateway ({@link dev.sallyport.sandbox.vm.GatewayRelay}), taking
         * only the guest's address, the one source the bridge's table lets in.
         *
         * @param address    the proxy's listener on the host's loopback
         * @param caPem      its CA certificate, PEM
         * @param admin      its admin listener
         * @param adminToken its admin token (never shown)
         */
        record Attached(InetSocketAddress address, byte[] caPem, InetSocketAddress admin, String adminToken,
                        String identity, Optional<String> policy, Duration lease) implements ProxyMode {
            public Attached {
                Objects.requireNonNull(address, "address");
                caPem = caPem.clone();
                Objects.requireNonNull(admin, "admin");
                if (adminToken.isBlank()) {
                    throw new IllegalArgumentException("adminToken: empty (expected: the proxy's admin token)");
                }
                Objects.requireNonNull(identity, "identity");
                Objects.requireNonNull(policy, "policy");
                if (lease.toSeconds() < 3) {
                    throw new IllegalArgumentException("lease: " + lease.toSeconds() + " s (expected: 3 s or more)");
                }
            }

            @Override
            public byte[] caPem() {
                return caPem.clone();
            }

            @Override
            public boolean equals(Object other) {
                return other instanceof Attached a && a.address.equals(address) && Arrays.equals(a.caPem, caPem)
                        && a.admin.equals(admin) && a.adminToken.equals(adminToken) && a.identity.equals(identity)
                        && a.policy.equals(policy) && a.lease.equals(lease);
            }

            @Override
            public int hashCode() {
                return Objects.hash(address, Arrays.hashCode(caPem), admin, identity, policy, lease);
            }

            @Override
            public String toString() {
                return "Attached[" + address + ", admin=" + admin + ", identity=" + identity + ", policy="
                        + policy.orElse(identity) + ", lease=" + lease.toSeconds() + " s, adminToken=hidden]";
            }
        }
    }

    /** What confines the command. */
    public sealed interface Backend {

        /**
         * The process sandbox ({@link ProcessSandbox}). {@code options} sets what the command may see on the
         * {@link SandboxSpec.Builder} the run makes (passed-through variables, grants, {@code requireLandlock},
         * {@code gitWritable}, limits, ...); the run sets the command, workspace, proxy, CA and placeholders.
         * {@code capture} (on unless {@code --no-capture}): the run's own proxy answers the sandbox's DNS and takes
         * its connections to the names it answered, for clients that ignore the proxy variables.
         */
        @SuppressWarnings("AvoidCommonTypeNames")   // named after --backend process; always written Backend.Process
        record Process(Consumer<SandboxSpec.Builder> options, boolean capture) implements Backend {
            public Process {
                Objects.requireNonNull(options, "options");
            }

            /** With transparent capture. */
            public Process(Consumer<SandboxSpec.Builder> options) {
                this(options, true);
            }

            @Override
            public String toString() {
                return "Process";
            }
        }

        /**
         * The VM backend ({@link dev.sallyport.sandbox.vm.VmSandbox}): the command in {@code image} under
         * {@code runtime}, driven by the {@code nerdctl} program; with {@code dryRun} every host command is printed
         * and none runs. {@code capture} (on unless {@code --no-capture}): the host table sends the guest's DNS and its
         * TCP to synthetic addresses to the proxy's DNS stub and transparent listener on the gateway; off, the guest
         * reaches only the explicit proxy port. {@code gitReadOnly}: the whole {@code .git} read-only, whatever the
         * policy's {@code sandbox.git} says.
         */
        record Nerdctl(VmRuntime runtime, String image, boolean dryRun, String nerdctl, boolean capture,
                       boolean gitReadOnly) implements Backend {
            public Nerdctl {
                Objects.requireNonNull(runtime, "runtime");
                Objects.requireNonNull(image, "image");
                Objects.requireNonNull(nerdctl, "nerdctl");
            }

            /** With .git as the policy says. */
            public Nerdctl(VmRuntime runtime, String image, boolean dryRun, String nerdctl, boolean capture) {
                this(runtime, image, dryRun, nerdctl, capture, false);
            }

            /** With transparent capture. */
            public Nerdctl(VmRuntime runtime, String image, boolean dryRun, String nerdctl) {
                this(runtime, image, dryRun, nerdctl, true);
            }

            /** The {@code nerdctl} found on the PATH, with transparent capture. */
            public Nerdctl(VmRuntime runtime, String image, boolean dryRun) {
                this(runtime, image, dryRun, "nerdctl");
            }
        }
    }

    /** Builds a {@link SandboxRun}. */
    public static final class Builder {
        private final List<String> command;
        private final Path workdir;
        private Policy policy = Policy.defaults();
        private final List<String> secrets = new ArrayList<>();
        private ProxyMode proxy = new ProxyMode.Own(Optional.empty());
        private Backend backend = new Backend.Process(spec -> { });

        private Builder(List<String> command, Path workdir) {
            this.command = command;
            this.workdir = workdir;
        }

        public Builder policy(Policy value) {
            this.policy = value;
            return this;
        }

        /** Only this secret's placeholder (call once per secret); without any call, every secret's. */
        public Builder secret(String name) {
            secrets.add(name);
            return this;
        }

        public Builder proxy(ProxyMode value) {
            this.proxy = value;
            return this;
        }

        /** The process sandbox, {@code options} applied to its spec. */
        public Builder process(Consumer<SandboxSpec.Builder> options) {
            this.backend = new Backend.Process(options);
            return this;
        }

        public Builder backend(Backend value) {
            this.backend = value;
            return this;
        }

        public SandboxRun build() {
            return new SandboxRun(command, workdir, policy, secrets, proxy, backend);
        }
    }
}
