package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.CniConflist;
import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.DryRun;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.sandbox.net.IsolationRules;
import dev.sallyport.sandbox.net.RunMarkers;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One VM-backend run, start to end:
 * <ol>
 *   <li>pulls the image, with its progress on the terminal, if this host does not have it yet;</li>
 *   <li>{@code nerdctl network create} (declares the CNI network: bridge, subnet, no masquerade, no ICC, no IPv6);</li>
 *   <li>checks nerdctl will use the bridge name our rules key on ({@code network inspect --mode=native}), and adds
 *       the guest's routes (the synthetic prefix, and with captured literal addresses the default route, via the
 *       gateway) to the IPAM of the conflist that inspect names ({@link CniConflist});</li>
 *   <li>creates that bridge with the gateway address and IPv6 off, then loads the nftables table;</li>
 *   <li>starts the proxy on gateway:port ({@link ProxyHook});</li>
 *   <li>runs {@link GuestProbe} in an identical sandbox: interface present, proxy reachable, or a clear error;</li>
 *   <li>runs the workload attached to the terminal and returns its exit status, while {@link TableWatch} checks
 *       every second that the table is still loaded (and, if it vanished, loads it again and stops the sandbox);</li>
 *   <li>always (also on SIGINT/SIGTERM, through a shutdown hook) removes the containers, and once nerdctl confirms
 *       they are gone, the network, table, bridge, IPAM leases and CNI's isolation rules ({@link #teardown()}).</li>
 * </ol>
 * With {@code dryRun} every command is printed and none runs.
 */
public final class VmRunner {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(15);
    private static final Duration WATCH_INTERVAL = Duration.ofSeconds(1);

    private final NerdctlSpec spec;
    private final CommandRunner runner;
    private final RunMarkers markers;
    private final PrintStream out;
    private boolean tornDown;
    private volatile /* @Nullable */ TableWatch watch;

    public VmRunner(NerdctlSpec spec, CommandRunner runner, RunMarkers markers, PrintStream out) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.runner = Objects.requireNonNull(runner, "runner");
        this.markers = Objects.requireNonNull(markers, "markers");
        this.out = Objects.requireNonNull(out, "out");
    }

    /** Runs with a proxy someone else already started on the gateway (or prints the plan with dryRun). */
    public static int run(NerdctlSpec spec, boolean dryRun, PrintStream out) throws VmRunException {
        return run(spec, dryRun, out, ProxyHook.EXTERNAL);
    }

    /** Runs the sandbox; {@code proxy} starts the proxy once the gateway address exists. */
    public static int run(NerdctlSpec spec, boolean dryRun, PrintStream out, ProxyHook proxy) throws VmRunException {
        CommandRunner runner = dryRun ? new DryRun(out) : new HostShell(COMMAND_TIMEOUT);
        return new VmRunner(spec, runner, new RunMarkers(RunMarkers.DEFAULT_DIR), out).execute(proxy);
    }

    /** Everything before the workload, in order (what {@code --dry-run} shows first). */
    public List<HostCommand> setupCommands() {
        SandboxNetwork network = spec.network();
        List<HostCommand> commands = new ArrayList<>();
        commands.add(HostCommand.of(NerdctlCommand.networkCreate(spec.nerdctl(), network).toArray(String[]::new)));
        commands.addAll(network.bridgeCommands());
        commands.add(network.firewallCommand());
        return commands;
    }

    /**
     * The teardown once the containers are confirmed gone; every step tolerates "already gone". Before these run,
     * {@link #teardown()} removes the containers and lists what is left.
     */
    public List<HostCommand> teardownCommands() {
        SandboxNetwork network = spec.network();
        List<HostCommand> commands = new ArrayList<>();
        commands.add(HostCommand.tolerant(NerdctlCommand.networkRemove(spec.nerdctl(), network).toArray(String[]::new)));
        commands.addAll(network.teardownCommands());
        return commands;
    }

    /** Runs the sandbox and returns the workload's exit status. */
    public int execute(ProxyHook proxy) throws VmRunException {
        Thread onSignal = Thread.ofPlatform().unstarted(this::teardown);
        AutoCloseable proxyHandle = () -> { };
        try {
            if (!runner.dryRun()) {
                markers.mark(spec.network().id());
            }
            Runtime.getRuntime().addShutdownHook(onSignal);
            pullIfMissing();
            List<HostCommand> setup = setupCommands();
            runner.capture(setup.getFirst());
            prepareConflist();
            for (HostCommand command : setup.subList(1, setup.size())) {
                runner.capture(command);
            }
            if (!runner.dryRun()) {
                watch = TableWatch.start(spec, runner, out, WATCH_INTERVAL, proxy::spoofed);
            }
            proxyHandle = startProxy(proxy);
            try {
                probe();
            } catch (VmRunException probeFailed) {
                throw tableLost().orElse(probeFailed);       // the watch stopped the probe: say why
            }
            int exit = runner.interactive(HostCommand.of(NerdctlCommand.build(spec).toArray(String[]::new)));
            Optional<VmRunException> lost = tableLost();
            if (lost.isPresent()) {
                throw lost.get();
            }
            return exit;
        } catch (IOException e) {
            throw new VmRunException("sandbox " + spec.network().networkName() + ": " + e.getMessage(), e);
        } finally {
            TableWatch running = watch;
            if (running != null) {
                running.close();        // its last look reports spoofed sources: to a proxy that is still up
            }
            closeQuietly(proxyHandle);
            teardown();
            try {
                Runtime.getRuntime().removeShutdownHook(onSignal);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or will run; teardown is idempotent
            }
        }
    }

    /**
     * Stops the sandbox and removes its traces, as on SIGINT/SIGTERM. The network, the bridge and the firewall table
     * go only once nerdctl confirms no container of this sandbox is left: a Kata VM can outlive a containerd restart,
     * and removing the table would set a live one free. Otherwise they stay, and a line says so. Idempotent; a later
     * call retries what an earlier one kept.
     *
     * @return {@code true} when everything is gone
     */
    public synchronized boolean teardown() {
        if (tornDown) {
            return true;
        }
        TableWatch running = watch;
        if (running != null) {
            running.close();
        }
        SandboxNetwork network = spec.network();
        Optional<String> left = containersLeft();
        if (left.isPresent()) {
            out.println("warning: " + left.get() + ": kept network " + network.networkName() + ", bridge "
                    + network.bridgeName() + " and table inet " + network.tableName() + " so it stays confined; "
                    + "once 'nerdctl rm -f " + network.networkName() + "' succeeds, run 'sallyport cleanup'");
            return false;
        }
        for (HostCommand command : teardownCommands()) {
            try {
                runner.capture(command);
            } catch (IOException e) {
                out.println("warning: cleanup step failed: " + e.getMessage() + " (run 'sallyport cleanup')");
            }
        }
        try {
            String bridge = network.bridgeName();
            IsolationRules.remove(runner, bridge::equals);
        } catch (IOException e) {
            out.println("warning: removing CNI's isolation rules failed: " + e.getMessage() + " (run 'sallyport cleanup')");
        }
        if (!runner.dryRun()) {
            try {
                markers.unmark(network.id());
            } catch (IOException e) {
                out.println("warning: " + e.getMessage());
            }
        }
        tornDown = true;
        return true;
    }

    /** Removes this sandbox's containers; what nerdctl still lists afterwards (or why it cannot tell), if anything. */
    private Optional<String> containersLeft() {
        try {
            CommandResult removed = runner.capture(HostCommand.tolerant(
                    NerdctlCommand.forceRemove(spec.nerdctl(), spec.network()).toArray(String[]::new)));
            CommandResult listed = runner.capture(HostCommand.tolerant(
                    NerdctlCommand.listContainers(spec.nerdctl(), spec.network()).toArray(String[]::new)));
            String why = removed.exit() == 0 ? "" : " (nerdctl rm -f exited " + removed.exit() + ": "
                    + removed.firstErrorLine() + ")";
            if (listed.exit() != 0) {
                return Optional.of("cannot tell whether a container of sandbox " + spec.network().networkName()
                        + " is still running: nerdctl ps exited " + listed.exit() + ": " + listed.firstErrorLine() + why);
            }
            List<String> names = listed.stdout().lines().map(String::strip).filter(n -> !n.isEmpty()).toList();
            return names.isEmpty() ? Optional.empty()
                    : Optional.of("container " + String.join(", ", names) + " is still there" + why);
        } catch (IOException e) {
            return Optional.of("cannot tell whether a container of sandbox " + spec.network().networkName()
                    + " is still running: " + e.getMessage());
        }
    }

    /** The run's failure when the watch found the table gone and stopped the sandbox. */
    private Optional<VmRunException> tableLost() {
        TableWatch running = watch;
        if (running == null || !running.tripped()) {
            return Optional.empty();
        }
        return Optional.of(new VmRunException("firewall table inet " + spec.network().tableName() + " disappeared "
                + "during the run (an 'nft flush ruleset', as a reload of nftables.service does?): it was loaded again "
                + "at once and the sandbox stopped (expected: the table to stay until the run ends)"));
    }

    /**
     * Pulls the image first, attached to the terminal, when this host does not have it: otherwise the probe would
     * pull it silently. The pull is the host's (containerd's), not the sandbox's; it does not go through the proxy.
     */
    private void pullIfMissing() throws IOException, VmRunException {
        CommandResult present = runner.capture(HostCommand.tolerant(NerdctlCommand.imageInspect(spec)
                .toArray(String[]::new)));
        if (present.exit() == 0) {
            return;
        }
        out.println("pulling " + spec.image() + " (on the host, not through the sandbox's proxy)");
        out.flush();
        int pulled = runner.interactive(HostCommand.of(NerdctlCommand.pull(spec).toArray(String[]::new)));
        if (pulled != 0) {
            throw new VmRunException("image " + spec.image() + ": nerdctl pull exited " + pulled
                    + " (expected: an image this host can pull; try 'nerdctl pull " + spec.image() + "')");
        }
    }

    /**
     * Reads what nerdctl wrote for the network: the bridge must be the one the table keys on, and the conflist gets the
     * guest's routes ({@link SandboxNetwork#guestRoutes()}) before any container is started on it.
     */
    private void prepareConflist() throws IOException, VmRunException {
        SandboxNetwork network = spec.network();
        HostCommand inspect = HostCommand.of(NerdctlCommand.networkInspect(spec.nerdctl(), network).toArray(String[]::new));
        CommandResult result = runner.capture(inspect);
        List<CniConflist.Route> routes = network.guestRoutes();
        if (runner instanceof DryRun dry) {
            if (routes.isEmpty()) {
                return;     // no capture: the guest needs no route beyond its link
            }
            dry.note("add IPAM routes " + String.join(", ", routes.stream().map(r -> r.dst() + " via " + r.gw())
                    .toList()) + " to the bridge plugin of the conflist that inspect names (its File)");
            return;
        }
        CniConflist.Inspected inspected = CniConflist.inspected(result.stdout(), network.networkName());
        String expected = network.bridgeName();
        if (!inspected.bridge().equals(expected)) {
            throw new VmRunException("network " + network.networkName() + ": nerdctl uses bridge '"
                    + inspected.bridge() + "' (expected: '" + expected
                    + "', the name the firewall rules key on; this nerdctl version names bridges differently)");
        }
        if (!routes.isEmpty()) {
            CniConflist.addRoutes(inspected.file(), network.networkName(), routes);
        }
    }

    private AutoCloseable startProxy(ProxyHook proxy) throws VmRunException {
        InetSocketAddress listen = new InetSocketAddress(spec.network().gateway(), spec.network().proxyPort());
        if (runner instanceof DryRun dry) {
            dry.note(proxy.plan(spec.network()));
            return () -> { };
        }
        try {
            return proxy.start(spec.network());
        } catch (Exception e) {
            throw new VmRunException("proxy: cannot listen on " + listen.getHostString() + ":" + listen.getPort()
                    + ": " + e.getMessage() + " (expected: the bridge gateway address to be bindable)", e);
        }
    }

    private void probe() throws IOException, VmRunException {
        List<String> argv = NerdctlCommand.probe(spec);
        CommandResult result = runner.capture(new HostCommand(argv, null, true));
        if (runner.dryRun()) {
            return;
        }
        if (spec.network().capture()) {
            GuestProbe.routeWarning(result.stdout()).ifPresent(warning -> out.println("warning: " + warning));
        }
        GuestProbe.Result probe = GuestProbe.parse(result.stdout(),
                spec.network().gateway() + ":" + spec.network().proxyPort());
        switch (probe) {
            case GuestProbe.Result.Reached reached -> { }
            case GuestProbe.Result.Untested untested -> out.println("warning: " + untested.message());
            case GuestProbe.Result.Failed failed -> throw new VmRunException(failed.message()
                    + (result.exit() != 0 ? "; nerdctl exited " + result.exit() + ": " + result.firstErrorLine() : ""));
            case GuestProbe.Result.NoInterface none -> throw new VmRunException(none.message());
            case GuestProbe.Result.Unreachable unreachable -> throw new VmRunException(unreachable.message());
        }
    }

    private static void closeQuietly(AutoCloseable handle) {
        try {
            handle.close();
        } catch (Exception e) {
            // the proxy's own close logs what went wrong; teardown must go on
        }
    }
}
