package dev.sallyport.sandbox.internal;

import dev.sallyport.policy.LiteralAddresses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The small shell between the runner's JVM and bwrap. {@code ProcessBuilder} closes every fd above 2 and starts
 * no process inside a cgroup, so {@code sh} joins the run's cgroup (writes its own pid, then every process after
 * it is inside), opens the seccomp program as fd 3 and execs the rest. Where the host allows it the rest begins
 * with {@code unshare --user --map-root-user}: a user namespace of the run's own, whose
 * {@code /proc/sys/user/max_inotify_*} the second {@code sh} lowers to the sandbox's share before it execs bwrap.
 * inotify instances and watches are charged to every user namespace up to the host user's, so the sandbox (a
 * namespace below this one) can use this share and no more. File names and numbers travel as arguments, never as
 * script text.
 */
public final class Launcher {
    /** $1 the seccomp file, $2 the number of cgroup.procs files that follow, then the command. */
    static final String JOIN = "f=$1; n=$2; shift 2;"
            + " while [ \"$n\" -gt 0 ]; do echo $$ > \"$1\" || { echo \"sallyport sandbox: cannot join the cgroup"
            + " ($1)\" >&2; exit 125; }; shift; n=$((n - 1)); done;"
            + " exec \"$@\" 3<\"$f\"";
    /** $1 the inotify instances, $2 the watches, then the command. */
    static final String INOTIFY = "echo \"$1\" > /proc/sys/user/max_inotify_instances"
            + " && echo \"$2\" > /proc/sys/user/max_inotify_watches && shift 2 && exec \"$@\"";
    /**
     * $1 the inotify instances, $2 the watches, $3 {@code ip}, $4 {@code nft}, $5 the nftables rules, then the
     * command: the loopback up with the synthetic prefix on it (so connects to it are routed at all; with
     * {@code literals} {@link LiteralAddresses#CAPTURE} a default route through it too) and the rules that redirect
     * what is captured to the sandbox's listener.
     */
    static String inotifyAndCapture(LiteralAddresses literals, CaptureRules.Families families) {
        return "echo \"$1\" > /proc/sys/user/max_inotify_instances"
                + " && echo \"$2\" > /proc/sys/user/max_inotify_watches"
                + " && " + CaptureRules.loopback("\"$3\"", literals, families)
                + " && \"$4\" \"$5\" && shift 5 && exec \"$@\""
                + " || { echo 'sallyport sandbox: cannot set up transparent capture in the sandbox network namespace"
                + " (expected: ip and nft working in a user namespace; --no-capture runs without it)' >&2; exit 125; }";
    }
    private static final Path UNSHARE = Path.of("/usr/bin/unshare");
    /** Whether the layer works, by the command line that starts it ({@code setpriv ...} for a root runner). */
    private static final Map<List<String>, Boolean> USER_NAMESPACE_LAYER = new ConcurrentHashMap<>();
    /** Whether the capture rules load in the layer's network namespace, by the same command line. */
    private static final Map<List<String>, Probe> CAPTURE_LAYER = new ConcurrentHashMap<>();

    private Launcher() {
    }

    /** The argv that joins {@code procsFiles}, opens {@code seccomp} as fd 3 and runs {@code command}. */
    public static List<String> argv(Path seccomp, List<Path> procsFiles, List<String> command) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", JOIN, "sallyport-sandbox", seccomp.toString(),
                Integer.toString(procsFiles.size())));
        procsFiles.forEach(p -> argv.add(p.toString()));
        argv.addAll(command);
        return argv;
    }

    /** {@code command} prefixed with the user namespace that carries the sandbox's inotify share. */
    public static List<String> withInotifyShare(int instances, int watches, List<String> command) {
        List<String> argv = new ArrayList<>(List.of(UNSHARE.toString(), "--user", "--map-root-user", "/bin/sh", "-c",
                INOTIFY, "sallyport-inotify", Integer.toString(instances), Integer.toString(watches)));
        argv.addAll(command);
        return argv;
    }

    /**
     * {@code command} prefixed with the user namespace that carries the sandbox's inotify share and, with it, the
     * sandbox's network namespace: owned by that user namespace (where the launcher is root), so the launcher can
     * bring the loopback up and load {@code rules} there, and the sandbox, a user namespace below, cannot change
     * them.
     */
    public static List<String> withInotifyShareAndCapture(int instances, int watches, CaptureRules.Tools tools,
                                                          LiteralAddresses literals, CaptureRules.Families families,
                                                          String rules, List<String> command) {
        List<String> argv = new ArrayList<>(List.of(UNSHARE.toString(), "--user", "--map-root-user", "--net",
                "/bin/sh", "-c", inotifyAndCapture(literals, families), "sallyport-inotify", Integer.toString(instances),
                Integer.toString(watches), tools.ip().toString(), tools.nft().toString(), rules));
        argv.addAll(command);
        return argv;
    }

    /**
     * Whether this host lets the runner make the user namespace and lower its inotify limits, started through
     * {@code prefix} (empty, or a root runner's {@code setpriv} to the command's uid); tried once per JVM and
     * prefix: {@code unshare} missing, or an AppArmor policy that denies capabilities in new namespaces, say no.
     */
    public static boolean userNamespaceLayer(List<String> prefix) {
        return USER_NAMESPACE_LAYER.computeIfAbsent(List.copyOf(prefix), Launcher::tryLayer);
    }

    private static boolean tryLayer(List<String> prefix) {
        return Files.isExecutable(UNSHARE) && succeeds(layerProbe(prefix));
    }

    /** The command line that tries the layer through {@code prefix}. */
    static List<String> layerProbe(List<String> prefix) {
        List<String> argv = new ArrayList<>(prefix);
        argv.addAll(List.of(UNSHARE.toString(), "--user", "--map-root-user", "/bin/sh", "-c",
                "v=$(cat /proc/sys/user/max_inotify_instances) && echo \"$v\" > /proc/sys/user/max_inotify_instances"));
        return argv;
    }

    /**
     * Takes what an earlier run found through {@code prefix} ({@link ProbeRecord}): the layer works and, unless
     * {@code capture} is {@link Probe#NONE} (not known: probed when asked), so do the capture rules. Only what works
     * is taken: a host that lost it fails the run at the launcher, it never runs with less.
     */
    static void remember(List<String> prefix, Probe capture) {
        USER_NAMESPACE_LAYER.putIfAbsent(List.copyOf(prefix), true);
        if (capture != Probe.NONE) {
            CAPTURE_LAYER.putIfAbsent(List.copyOf(prefix), capture);
        }
    }

    /** What is known through {@code prefix} so far, without probing: whether the layer works ... */
    static boolean knownLayer(List<String> prefix) {
        return USER_NAMESPACE_LAYER.getOrDefault(List.copyOf(prefix), false);
    }

    /** ... and what the capture probe found (NONE: nothing, or not probed). */
    static Probe knownCapture(List<String> prefix) {
        return CAPTURE_LAYER.getOrDefault(List.copyOf(prefix), Probe.NONE);
    }

    /**
     * Whether the capture rules load in a network namespace of that layer, started through {@code prefix}: tried once
     * per JVM and prefix ({@code ip} or {@code nft} refused there, or a kernel without nf_tables' NAT, say no).
     */
    public static boolean captureLayer(List<String> prefix, CaptureRules.Tools tools) {
        return probe(prefix, tools) != Probe.NONE;
    }

    /**
     * What capture covers in that layer's network namespace: IPv4 and IPv6, or IPv4 alone where the host has IPv6
     * but the namespace refuses the IPv6 prefix (or its rules); IPv4 alone also when the layer does not work at all.
     */
    public static CaptureRules.Families families(List<String> prefix, CaptureRules.Tools tools) {
        return probe(prefix, tools) == Probe.IPV4_AND_IPV6 ? CaptureRules.Families.IPV4_AND_IPV6
                : CaptureRules.Families.IPV4;
    }

    private static Probe probe(List<String> prefix, CaptureRules.Tools tools) {
        return CAPTURE_LAYER.computeIfAbsent(List.copyOf(prefix),
                p -> userNamespaceLayer(p) ? tryCapture(p, tools) : Probe.NONE);
    }

    /** What the probe found: nothing works, IPv4 only (the IPv6 part failed: exit 3), or both. */
    enum Probe { NONE, IPV4, IPV4_AND_IPV6 }

    private static Probe tryCapture(List<String> prefix, CaptureRules.Tools tools) {
        boolean six = CaptureRules.Families.wanted() == CaptureRules.Families.IPV4_AND_IPV6;
        return switch (exitOf(captureProbe(prefix, tools))) {
            case 0 -> six ? Probe.IPV4_AND_IPV6 : Probe.IPV4;
            case 3 -> Probe.IPV4;
            default -> Probe.NONE;
        };
    }

    /** The command line that tries the capture rules through {@code prefix}: exit 0 both families, 3 IPv4 only. */
    static List<String> captureProbe(List<String> prefix, CaptureRules.Tools tools) {
        boolean six = CaptureRules.Families.wanted() == CaptureRules.Families.IPV4_AND_IPV6;
        List<String> argv = new ArrayList<>(prefix);
        argv.addAll(List.of(UNSHARE.toString(), "--user", "--map-root-user", "--net", "/bin/sh", "-c",
                CaptureRules.loopback("\"$1\"", LiteralAddresses.NO_ROUTE, CaptureRules.Families.IPV4)
                        + " && \"$2\" \"$3\" && { [ \"$4\" = none ] || { " + CaptureRules.loopback6("\"$1\"")
                        + " && \"$2\" \"$4\"; } || exit 3; }",
                "sallyport-capture-probe", tools.ip().toString(), tools.nft().toString(),
                CaptureRules.rules4(3128, LiteralAddresses.NO_ROUTE),
                six ? CaptureRules.rules6(3128, LiteralAddresses.NO_ROUTE) : "none"));
        return argv;
    }

    /** Runs {@code argv} with nothing in or out, for up to 10 seconds: true when it exits 0. */
    private static boolean succeeds(List<String> argv) {
        return exitOf(argv) == 0;
    }

    /** Runs {@code argv} with nothing in or out, for up to 10 seconds: its exit status, -1 when it did not end. */
    private static int exitOf(List<String> argv) {
        try {
            Process p = new ProcessBuilder(argv)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
