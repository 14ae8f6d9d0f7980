package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.SandboxNetwork;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every nerdctl argv the VM backend runs. Pure argument building: the tests assert these lists exactly.
 *
 * <p>The workload line, in order: {@code run --rm -i [-t] --name --label --runtime --network --ip GUEST --dns GATEWAY
 * --user -w /workspace --read-only --tmpfs /tmp:exec,size --cap-drop ALL --security-opt no-new-privileges --pids-limit
 * --memory --cpus}, the workspace and trust mounts, one {@code -e} per variable, then {@code -- IMAGE CMD...}.
 * The {@code --} goes before the image: nerdctl stops parsing its own flags there, so neither the image nor the
 * command can be taken for a flag (after the image, a {@code --} would be handed to the workload as argv[0]).
 * No {@code -p}: nothing is published. {@code --dns GATEWAY} points the resolver at the bridge gateway, whose port
 * 53 the runner's table DNATs to the proxy's DNS stub: names some rule could allow get a synthetic address, the rest
 * NXDOMAIN, and no question goes to a real resolver. {@code --ip GUEST} fixes the guest's address (nerdctl hands it to
 * CNI's host-local IPAM as {@code CNI_ARGS IP=}): the table drops every other source from the bridge, so the probe
 * (which has ended before the workload starts) and the workload both have it.
 */
public final class NerdctlCommand {

    /** Label that marks every container the runner starts (value: the sandbox id). */
    public static final String LABEL = "dev.sallyport.sandbox";

    private NerdctlCommand() {
    }

    /** The workload: {@code nerdctl run ... -- IMAGE CMD...}. */
    public static List<String> build(NerdctlSpec spec) {
        List<String> argv = runPrefix(spec, spec.network().networkName(), spec.tty());
        argv.add("--");
        argv.add(spec.image());
        argv.addAll(spec.command());
        return List.copyOf(argv);
    }

    /**
     * The pre-flight probe: the same sandbox (runtime, network, user, mounts, limits), with {@link GuestProbe}'s
     * script as entry point instead of the workload.
     */
    public static List<String> probe(NerdctlSpec spec) {
        List<String> argv = runPrefix(spec, spec.network().networkName() + "-probe", false);
        argv.add("--entrypoint");
        argv.add("/bin/sh");
        argv.add("--");
        argv.add(spec.image());
        argv.add("-c");
        argv.add(GuestProbe.script(spec.network().gateway(), spec.network().proxyPort()));
        return List.copyOf(argv);
    }

    /**
     * {@code nerdctl network create}: bridge driver, {@code --internal}, our subnet and gateway, masquerading off,
     * IPv6 off.
     *
     * <p>{@code --internal} (nerdctl 2.1.4+) writes the bridge plugin without {@code isGateway} and the IPAM without
     * a default route, and leaves out {@code portmap}: CNI no longer turns on {@code ip_forward} for the whole host
     * nor gives the guest a default route. The guest reaches the proxy on-link, at the gateway address the runner
     * puts on the bridge itself ({@link SandboxNetwork#bridgeCommands()}); the runner then adds routes via the gateway
     * for what the table captures only ({@link SandboxNetwork#guestRoutes()}, written into the conflist).
     *
     * <p>No {@code com.docker.network.bridge.enable_icc=false}: it only asks CNI's firewall plugin to drop traffic
     * between containers of one bridge, and a sandbox's bridge never holds two containers at once (the probe has
     * ended before the workload starts); our own table already drops everything routed to or from the bridge.
     */
    public static List<String> networkCreate(String nerdctl, SandboxNetwork network) {
        return List.of(nerdctl, "network", "create",
                "--driver", "bridge",
                "--internal",
                "--subnet", network.subnet().toString(),
                "--gateway", network.gateway(),
                "--ipv6=false",
                "--opt", "com.docker.network.bridge.enable_ip_masquerade=false",
                "--label", LABEL + "=" + network.id(),
                network.networkName());
    }

    /** {@code nerdctl network inspect --mode=native}: prints the CNI conflist (which names the bridge) and its file. */
    public static List<String> networkInspect(String nerdctl, SandboxNetwork network) {
        return List.of(nerdctl, "network", "inspect", "--mode=native", network.networkName());
    }

    /** Removes the network (nerdctl also deletes its bridge). */
    public static List<String> networkRemove(String nerdctl, SandboxNetwork network) {
        return List.of(nerdctl, "network", "rm", network.networkName());
    }

    /** Removes the workload and probe containers if they survived (they run with --rm). */
    public static List<String> forceRemove(String nerdctl, SandboxNetwork network) {
        return List.of(nerdctl, "rm", "-f", network.networkName(), network.networkName() + "-probe");
    }

    /** {@code nerdctl image inspect}: exits 0 when the image is already on this host. */
    public static List<String> imageInspect(NerdctlSpec spec) {
        return List.of(spec.nerdctl(), "image", "inspect", "--format", "{{.ID}}", "--", spec.image());
    }

    /** {@code nerdctl pull}, attached to the terminal so its progress shows. */
    public static List<String> pull(NerdctlSpec spec) {
        return List.of(spec.nerdctl(), "pull", "--", spec.image());
    }

    /** Lists every container of this sandbox, running or not, by our label: one name a line, nothing when none. */
    public static List<String> listContainers(String nerdctl, SandboxNetwork network) {
        return List.of(nerdctl, "ps", "-a", "--filter", "label=" + LABEL + "=" + network.id(), "--format", "{{.Names}}");
    }

    private static List<String> runPrefix(NerdctlSpec spec, String name, boolean tty) {
        List<String> argv = new ArrayList<>(List.of(spec.nerdctl(), "run", "--rm", "-i"));
        if (tty) {
            argv.add("-t");
        }
        argv.addAll(List.of(
                "--name", name,
                "--label", LABEL + "=" + spec.network().id(),
                "--runtime", spec.runtime().runtimeType(),
                "--network", spec.network().networkName(),
                "--ip", spec.network().guest(),
                "--dns", spec.network().gateway(),
                "--user", spec.user().toString(),
                "-w", GuestEnvironment.WORKSPACE,
                "--read-only",
                "--tmpfs", tmpfs(spec.limits()),
                "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges",
                "--pids-limit", Integer.toString(spec.limits().pids()),
                "--memory", spec.limits().memory(),
                "--cpus", spec.limits().cpus()));
        argv.add("--mount");
        argv.add(bind(spec.workspace().toString(), GuestEnvironment.WORKSPACE, false));
        for (NerdctlSpec.Guarded g : spec.guarded()) {
            argv.add("--mount");
            argv.add(bind(g.path().toString(), GuestEnvironment.WORKSPACE + "/" + spec.workspace().relativize(g.path()),
                    g.readOnly()));
        }
        argv.add("--mount");
        argv.add(bind(spec.trustBundle().toString(), GuestEnvironment.GUEST_BUNDLE, true));
        for (String distroBundle : GuestEnvironment.DISTRO_BUNDLES) {
            argv.add("--mount");
            argv.add(bind(spec.trustBundle().toString(), distroBundle, true));
        }
        if (spec.javaTrustStore() != null) {
            argv.add("--mount");
            argv.add(bind(spec.javaTrustStore().toString(), GuestEnvironment.GUEST_TRUSTSTORE, true));
        }
        for (Map.Entry<String, String> variable : GuestEnvironment.of(spec).entrySet()) {
            argv.add("-e");
            argv.add(variable.getKey() + "=" + variable.getValue());
        }
        return argv;
    }

    /**
     * The guest's {@code /tmp} (its {@code $HOME} too). nerdctl puts {@code noexec,nosuid,nodev} in front of every
     * {@code --tmpfs}'s options and keeps the last of each pair, so {@code exec} must be said: without it
     * {@code go test}, pip's build environments, JNI libraries unpacked to /tmp and {@code ~/.cargo/bin} fail.
     */
    static String tmpfs(ResourceLimits limits) {
        return "/tmp:rw,exec,nosuid,nodev,size=" + limits.tmp() + ",mode=1777";
    }

    private static String bind(String source, String target, boolean readOnly) {
        return "type=bind,src=" + source + ",dst=" + target + (readOnly ? ",readonly" : "");
    }
}
