package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.SandboxNetwork;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Everything one VM-backend run needs. Paths are host paths; the guest sees them at fixed places
 * ({@link GuestEnvironment}).
 *
 * @param network         the sandbox network (names, gateway, proxy port)
 * @param runtime         kata, runc or runsc
 * @param image           image reference; never starts with '-'
 * @param command         the workload's argv, never empty
 * @param workspace       absolute host folder mounted read-write at {@code /workspace}
 * @param user            uid:gid the workload runs as
 * @param trustBundle     absolute host path of the PEM bundle (proxy CA + public roots)
 * @param javaTrustStore  absolute host path of a PKCS12 trust store for JVMs, or {@code null}
 * @param secrets         secret name to placeholder (what the guest gets instead of the value)
 * @param limits          pids, memory, cpus
 * @param tty             allocate a terminal ({@code -t}); only when stdin is one
 * @param nerdctl         the nerdctl program (name on the PATH or absolute path)
 * @param guarded         host folders and files inside the workspace mounted over it at their place in
 *                        {@code /workspace}, in order: the pinned folders (writable, so they cannot be renamed away)
 *                        then the protected entries (read-only): git's hooks and config, editor and agent configs
 */
public record NerdctlSpec(SandboxNetwork network, VmRuntime runtime, String image, List<String> command,
                          Path workspace, UserIds user, Path trustBundle, /* @Nullable */ Path javaTrustStore,
                          SequencedMap<String, String> secrets, ResourceLimits limits, boolean tty, String nerdctl,
                          List<Guarded> guarded) {

    /** One mount over the workspace: {@code path} inside it on the host, read-only or pinned (writable). */
    public record Guarded(Path path, boolean readOnly) {}

    /** A spec without mounts over the workspace. */
    public NerdctlSpec(SandboxNetwork network, VmRuntime runtime, String image, List<String> command,
                       Path workspace, UserIds user, Path trustBundle, Path javaTrustStore,
                       SequencedMap<String, String> secrets, ResourceLimits limits, boolean tty, String nerdctl) {
        this(network, runtime, image, command, workspace, user, trustBundle, javaTrustStore, secrets, limits, tty,
                nerdctl, List.of());
    }

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public NerdctlSpec {
        command = List.copyOf(command);
        secrets = sortedCopy(secrets);
        guarded = List.copyOf(guarded);
        for (Guarded g : guarded) {
            if (!g.path().normalize().startsWith(workspace) || g.path().normalize().equals(workspace)
                    || g.path().toString().contains(",")) {
                throw new IllegalArgumentException("guarded: " + g.path() + " (expected: a path inside the workspace "
                        + workspace + " without ',')");
            }
        }
        if (image.isBlank() || image.startsWith("-") || image.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("image: '" + image + "' (expected: an image reference like debian:12)");
        }
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command: empty (expected: the program to run after --)");
        }
        if (user.root()) {
            throw new IllegalArgumentException("user: " + user + " (expected: a uid and gid other than 0; root in the "
                    + "guest could leave setuid-root programs in the host workspace)");
        }
        requireMountable("workspace", workspace);
        requireMountable("trustBundle", trustBundle);
        if (javaTrustStore != null) {
            requireMountable("javaTrustStore", javaTrustStore);
        }
        for (Map.Entry<String, String> secret : secrets.entrySet()) {
            if (!ENV_NAME.matcher(secret.getKey()).matches()) {
                throw new IllegalArgumentException("secrets: '" + secret.getKey()
                        + "' is not a valid environment variable name (expected: [A-Za-z_][A-Za-z0-9_]*)");
            }
            if (secret.getValue().indexOf('\n') >= 0 || secret.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("secrets: placeholder of " + secret.getKey()
                        + " holds a newline or NUL (expected: one line)");
            }
        }
        if (nerdctl.isBlank()) {
            throw new IllegalArgumentException("nerdctl: blank (expected: a program name or path)");
        }
    }

    /** A spec with the defaults: no Java trust store, no secrets, default limits, no tty, {@code nerdctl}. */
    public static NerdctlSpec of(SandboxNetwork network, VmRuntime runtime, String image, List<String> command,
                                 Path workspace, UserIds user, Path trustBundle) {
        return new NerdctlSpec(network, runtime, image, command, workspace, user, trustBundle, null,
                new TreeMap<>(), ResourceLimits.DEFAULTS, false, "nerdctl");
    }

    /** The same spec with {@code secrets} (name to placeholder). */
    public NerdctlSpec withSecrets(Map<String, String> placeholders) {
        return new NerdctlSpec(network, runtime, image, command, workspace, user, trustBundle, javaTrustStore,
                new TreeMap<>(placeholders), limits, tty, nerdctl, guarded);
    }

    /** The same spec with a PKCS12 trust store for JVMs. */
    public NerdctlSpec withJavaTrustStore(Path store) {
        return new NerdctlSpec(network, runtime, image, command, workspace, user, trustBundle, store, secrets,
                limits, tty, nerdctl, guarded);
    }

    /** The same spec with other limits, tty and nerdctl program. */
    public NerdctlSpec with(ResourceLimits newLimits, boolean newTty, String newNerdctl) {
        return new NerdctlSpec(network, runtime, image, command, workspace, user, trustBundle, javaTrustStore,
                secrets, newLimits, newTty, newNerdctl, guarded);
    }

    /** The same spec with {@code mounts} over the workspace. */
    public NerdctlSpec withGuarded(List<Guarded> mounts) {
        return new NerdctlSpec(network, runtime, image, command, workspace, user, trustBundle, javaTrustStore,
                secrets, limits, tty, nerdctl, mounts);
    }

    private static SequencedMap<String, String> sortedCopy(Map<String, String> map) {
        return java.util.Collections.unmodifiableSequencedMap(new TreeMap<>(map));
    }

    /**
     * nerdctl's {@code --mount} syntax is comma-separated: a comma (or newline) in a path would inject options; a
     * {@code ':'} fails late, inside nerdctl and containerd, which read it as a separator: refused here, up front.
     */
    private static void requireMountable(String what, Path path) {
        String text = path.toString();
        if (!path.isAbsolute() || text.chars().anyMatch(c -> c == ',' || c == '\n' || c == '=' || c == ':')) {
            throw new IllegalArgumentException(what + ": '" + text
                    + "' (expected: an absolute path without ',', '=', ':' or newlines, which nerdctl's mount options "
                    + "cannot carry; move or link the folder to such a path)");
        }
    }

    @Override
    public String toString() {
        return "NerdctlSpec[" + network.networkName() + ", " + runtime.cliName() + ", " + image + ", secrets="
                + secrets.keySet() + "]";
    }
}
