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

/**
 * {@code sallyport cleanup}: removes what crashed VM-backend runs left behind, found by name: containers and
 * nerdctl networks named {@code sallyport-<id>}, nftables tables {@code inet sallyport_<id>}, and bridges whose
 * alias is {@code sallyport-<id>}. Sandboxes whose runner is still alive ({@link RunMarkers}) are left alone.
 */
public final class SandboxCleanup {

    private final CommandRunner runner;
    private final RunMarkers markers;
    private final Path sysClassNet;
    private final boolean withNerdctl;

    /**
     * @param sysClassNet  where interfaces are listed ({@code /sys/class/net})
     * @param withNerdctl  also remove containers and networks through nerdctl (off when nerdctl is missing)
     */
    public SandboxCleanup(CommandRunner runner, RunMarkers markers, Path sysClassNet, boolean withNerdctl) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.markers = Objects.requireNonNull(markers, "markers");
        this.sysClassNet = Objects.requireNonNull(sysClassNet, "sysClassNet");
        this.withNerdctl = withNerdctl;
    }

    /** The usual cleanup: default marker dir, {@code /sys/class/net}, nerdctl if it is on the PATH. */
    public static SandboxCleanup forHost(CommandRunner runner) {
        return new SandboxCleanup(runner, new RunMarkers(RunMarkers.DEFAULT_DIR), Path.of("/sys/class/net"),
                Executables.find("nerdctl").isPresent());
    }

    /** Removes every leftover and prints one line per removal; returns the commands it ran. */
    public List<HostCommand> run(PrintStream out) throws IOException {
        Set<String> live = markers.liveIds();
        List<HostCommand> removals = new ArrayList<>();
        if (withNerdctl) {
            for (String name : listed("nerdctl", "ps", "-a", "--format", "{{.Names}}")) {
                if (leftover(name, SandboxNetwork.NAME_PREFIX, live)) {
                    removals.add(HostCommand.tolerant("nerdctl", "rm", "-f", name));
                }
            }
            for (String name : listed("nerdctl", "network", "ls", "--format", "{{.Name}}")) {
                if (leftover(name, SandboxNetwork.NAME_PREFIX, live)) {
                    removals.add(HostCommand.tolerant("nerdctl", "network", "rm", name));
                }
            }
        }
        for (String table : tables()) {
            if (leftover(table, SandboxNetwork.TABLE_PREFIX, live)) {
                removals.add(HostCommand.tolerant("nft", "delete", "table", "inet", table));
            }
        }
        for (String bridge : aliasedBridges(live)) {
            removals.add(HostCommand.tolerant("ip", "link", "del", "dev", bridge));
        }
        for (HostCommand removal : removals) {
            runner.capture(removal);
            out.println("removed: " + String.join(" ", removal.argv()));
        }
        if (removals.isEmpty()) {
            out.println("nothing to clean up");
        }
        return removals;
    }

    /** {@code true} for our names ({@code sallyport-ID}, {@code sallyport-ID-probe}) whose run is not alive. */
    static boolean leftover(String name, String prefix, Set<String> live) {
        if (!name.startsWith(prefix)) {
            return false;
        }
        String rest = name.substring(prefix.length());
        int dash = rest.indexOf('-');
        return !live.contains(dash < 0 ? rest : rest.substring(0, dash));
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

    private List<String> aliasedBridges(Set<String> live) throws IOException {
        List<String> bridges = new ArrayList<>();
        if (!Files.isDirectory(sysClassNet)) {
            return bridges;
        }
        try (DirectoryStream<Path> interfaces = Files.newDirectoryStream(sysClassNet)) {
            for (Path nic : interfaces) {
                Path alias = nic.resolve("ifalias");
                String text = Files.isReadable(alias) ? Files.readString(alias).strip() : "";
                if (leftover(text, SandboxNetwork.NAME_PREFIX, live)) {
                    bridges.add(nic.getFileName().toString());
                }
            }
        }
        return bridges;
    }
}
