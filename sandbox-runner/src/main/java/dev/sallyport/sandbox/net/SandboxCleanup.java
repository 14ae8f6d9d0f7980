package dev.sallyport.sandbox.net;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code sallyport cleanup}: removes what crashed VM-backend runs left behind, found by name: containers and
 * nerdctl networks named {@code sallyport-<id>}, nftables tables {@code inet sallyport_<id>}, bridges whose alias
 * is {@code sallyport-<id>}, host-local IPAM folders {@code /var/lib/cni/networks/sallyport-<id>}, the temporary
 * file a run killed while it rewrote its network's conflist left beside it ({@link CniConflist#TEMP_SUFFIX}), and
 * CNI's isolation rules for bridges that no longer exist. Sandboxes whose runner is still alive ({@link RunMarkers})
 * are left alone, and so is the network of a sandbox whose container is still there after {@code nerdctl rm -f} (or
 * when nerdctl cannot say): removing its table would set it free.
 */
public final class SandboxCleanup {

    private static final Pattern NERDCTL_BRIDGE = Pattern.compile("br-[0-9a-f]{12}");
    /** {@link CniConflist}'s temporary file for a network's conflist: its group is the network's name. */
    private static final Pattern CONFLIST_TEMP = Pattern.compile("\\..*?(" + SandboxNetwork.NAME_PREFIX
            + "[^.]+)\\.conflist\\..*" + Pattern.quote(CniConflist.TEMP_SUFFIX));

    private final CommandRunner runner;
    private final RunMarkers markers;
    private final Path sysClassNet;
    private final Path ipamState;
    private final Path cniConfigs;
    private final /* @Nullable */ String nerdctl;

    /**
     * @param sysClassNet where interfaces are listed ({@code /sys/class/net})
     * @param ipamState   where host-local IPAM keeps one folder per network ({@link SandboxNetwork#IPAM_STATE})
     * @param cniConfigs  where nerdctl writes the networks' conflists ({@link SubnetPool#CNI_CONFIGS})
     * @param nerdctl     the nerdctl program, or {@code null} when there is none (then no container can be left)
     */
    public SandboxCleanup(CommandRunner runner, RunMarkers markers, Path sysClassNet, Path ipamState, Path cniConfigs,
                          /* @Nullable */ String nerdctl) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.markers = Objects.requireNonNull(markers, "markers");
        this.sysClassNet = Objects.requireNonNull(sysClassNet, "sysClassNet");
        this.ipamState = Objects.requireNonNull(ipamState, "ipamState");
        this.cniConfigs = Objects.requireNonNull(cniConfigs, "cniConfigs");
        this.nerdctl = nerdctl;
    }

    /** The usual cleanup: default marker dir, {@code /sys/class/net}, host-local's folder, nerdctl if on the PATH. */
    public static SandboxCleanup forHost(CommandRunner runner) {
        return new SandboxCleanup(runner, new RunMarkers(RunMarkers.DEFAULT_DIR), Path.of("/sys/class/net"),
                SandboxNetwork.IPAM_STATE, SubnetPool.CNI_CONFIGS,
                Executables.find("nerdctl").map(Path::toString).orElse(null));
    }

    /** Removes every leftover and prints one line per removal (and per sandbox kept); returns what it ran. */
    public List<HostCommand> run(PrintStream out) throws IOException {
        Set<String> live = markers.liveIds();
        List<HostCommand> removals = new ArrayList<>();
        Set<String> kept = new TreeSet<>();
        if (nerdctl != null) {
            List<HostCommand> stops = new ArrayList<>();
            for (String name : listed(nerdctl, "ps", "-a", "--format", "{{.Names}}")) {
                if (leftover(name, SandboxNetwork.NAME_PREFIX, live)) {
                    stops.add(HostCommand.tolerant(nerdctl, "rm", "-f", name));
                }
            }
            for (HostCommand stop : stops) {
                CommandResult result = runner.capture(stop);
                if (result.exit() == 0) {
                    out.println("removed: " + String.join(" ", stop.argv()));
                }
                removals.add(stop);
            }
            kept.addAll(stillThere(live, stops, out));
            for (String name : listed(nerdctl, "network", "ls", "--format", "{{.Name}}")) {
                if (removable(name, live, kept)) {
                    removals.add(remove(HostCommand.tolerant(nerdctl, "network", "rm", name), out));
                }
            }
        }
        for (String table : tables()) {
            if (leftover(table, SandboxNetwork.TABLE_PREFIX, live) && !kept.contains(idOf(table))) {
                removals.add(remove(HostCommand.tolerant("nft", "delete", "table", "inet", table), out));
            }
        }
        for (String bridge : aliasedBridges(live, kept)) {
            removals.add(remove(HostCommand.tolerant("ip", "link", "del", "dev", bridge), out));
        }
        for (String network : ipamFolders(live, kept)) {
            removals.add(remove(HostCommand.tolerant("rm", "-rf", "--one-file-system",
                    ipamState.resolve(network).toString()), out));
        }
        for (Path temp : conflistTemps(live, kept)) {
            removals.add(remove(HostCommand.tolerant("rm", "-f", temp.toString()), out));
        }
        for (HostCommand deletion : IsolationRules.remove(runner, this::goneNerdctlBridge)) {
            out.println("removed: " + String.join(" ", deletion.argv()));
            removals.add(deletion);
        }
        if (removals.isEmpty() && kept.isEmpty()) {
            out.println("nothing to clean up");
        }
        return removals;
    }

    private HostCommand remove(HostCommand removal, PrintStream out) throws IOException {
        runner.capture(removal);
        out.println("removed: " + String.join(" ", removal.argv()));
        return removal;
    }

    /** Ids of dead runs whose container nerdctl still lists after the removals (all of them if it cannot list). */
    private Set<String> stillThere(Set<String> live, List<HostCommand> stops, PrintStream out) throws IOException {
        Set<String> kept = new TreeSet<>();
        if (stops.isEmpty() || runner.dryRun()) {
            return kept;
        }
        CommandResult listed = runner.capture(HostCommand.tolerant(nerdctl, "ps", "-a", "--format", "{{.Names}}"));
        List<String> names = listed.exit() != 0 ? stops.stream().map(stop -> stop.argv().getLast()).toList()
                : listed.stdout().lines().map(String::strip).filter(n -> leftover(n, SandboxNetwork.NAME_PREFIX, live))
                .toList();
        for (String name : names) {
            kept.add(idOf(name));
            out.println("kept: the network, bridge and table of " + name + ", whose container "
                    + (listed.exit() != 0 ? "nerdctl cannot list (" + listed.firstErrorLine() + ")" : "is still there")
                    + "; run 'sallyport cleanup' again once 'nerdctl rm -f " + name + "' succeeds");
        }
        return kept;
    }

    /** A bridge named as nerdctl names bridges ({@code br-} and 12 hex digits) that no longer exists. */
    private boolean goneNerdctlBridge(String bridge) {
        return NERDCTL_BRIDGE.matcher(bridge).matches() && !Files.exists(sysClassNet.resolve(bridge));
    }

    /** The sandbox id in one of our names: {@code sallyport-ID}, {@code sallyport-ID-probe}, {@code sallyport_ID}. */
    static String idOf(String name) {
        String rest = name.substring(SandboxNetwork.NAME_PREFIX.length());   // TABLE_PREFIX is as long
        int dash = rest.indexOf('-');
        return dash < 0 ? rest : rest.substring(0, dash);
    }

    /** A leftover of ours ({@link #leftover}) whose sandbox's network is not {@code kept} either. */
    private static boolean removable(String name, Set<String> live, Set<String> kept) {
        return leftover(name, SandboxNetwork.NAME_PREFIX, live) && !kept.contains(idOf(name));
    }

    /** {@code true} for our names ({@code sallyport-ID}, {@code sallyport-ID-probe}) whose run is not alive. */
    static boolean leftover(String name, String prefix, Set<String> live) {
        return name.startsWith(prefix) && !live.contains(idOf(name));
    }

    private List<String> listed(String... argv) throws IOException {
        if (runner.dryRun()) {
            runner.capture(HostCommand.tolerant(argv));
            return List.of();
        }
        CommandResult result = runner.capture(HostCommand.tolerant(argv));
        return result.exit() == 0 ? result.stdout().lines().map(String::strip).filter(s -> !s.isEmpty()).toList()
                : List.of();
    }

    /** Table names of family inet, from {@code nft list tables}. */
    private List<String> tables() throws IOException {
        return parseTables(String.join("\n", listed("nft", "list", "tables")));
    }

    /** Parses {@code nft list tables} output ("table inet NAME" lines) into inet table names. */
    static List<String> parseTables(String listing) {
        return listing.lines().map(String::strip).filter(l -> l.startsWith("table inet "))
                .map(l -> l.substring("table inet ".length()).strip()).toList();
    }

    private List<String> ipamFolders(Set<String> live, Set<String> kept) throws IOException {
        return entries(ipamState, name -> removable(name, live, kept)).stream().map(p -> p.getFileName().toString())
                .toList();
    }

    /** The temporary conflist files of dead runs' networks in {@link #cniConfigs}. */
    private List<Path> conflistTemps(Set<String> live, Set<String> kept) throws IOException {
        return entries(cniConfigs, name -> {
            Matcher m = CONFLIST_TEMP.matcher(name);
            return m.matches() && removable(m.group(1), live, kept);
        });
    }

    /** The entries of {@code folder} whose names {@code chosen} accepts; none when there is no such folder. */
    private static List<Path> entries(Path folder, Predicate<String> chosen) throws IOException {
        List<Path> found = new ArrayList<>();
        if (!Files.isDirectory(folder)) {
            return found;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder)) {
            for (Path entry : entries) {
                if (chosen.test(entry.getFileName().toString())) {
                    found.add(entry);
                }
            }
        }
        return found;
    }

    private List<String> aliasedBridges(Set<String> live, Set<String> kept) throws IOException {
        List<String> bridges = new ArrayList<>();
        if (!Files.isDirectory(sysClassNet)) {
            return bridges;
        }
        try (DirectoryStream<Path> interfaces = Files.newDirectoryStream(sysClassNet)) {
            for (Path nic : interfaces) {
                Path alias = nic.resolve("ifalias");
                String text = Files.isReadable(alias) ? Files.readString(alias).strip() : "";
                if (removable(text, live, kept)) {
                    bridges.add(nic.getFileName().toString());
                }
            }
        }
        return bridges;
    }
}
