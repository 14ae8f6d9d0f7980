package dev.sallyport.sandbox.net;

import dev.sallyport.policy.LiteralAddresses;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One sandbox's network: its names, its addresses and the host commands that build and remove it.
 *
 * <p>Order matters, and it is forced by nerdctl: {@code nerdctl network create} refuses a subnet that overlaps a
 * live interface address, so the CNI network is declared first; then the runner creates the bridge itself under
 * the exact name nerdctl's bridge plugin will use ({@code br-} + the first 12 hex digits of SHA-256 of the network
 * name), gives it the gateway address, turns IPv6 off on it and loads the nftables table, all before any
 * container exists. The proxy can then bind the gateway address; CNI's bridge plugin later reuses the bridge.
 *
 * @param id        short lowercase id shared by every name (container, network, table, bridge alias)
 * @param subnet    the sandbox's IPv4 network; the gateway is its first address
 * @param proxyPort the TCP port the proxy listens on at the gateway address; the two after it are its transparent
 *                  listener and its DNS stub there
 * @param literals  whether the table sends TCP to literal addresses to the transparent listener too (the policy's
 *                  {@code network.literal_addresses})
 * @param capture   whether the guest's DNS and TCP to synthetic (and captured literal) addresses go to the proxy's DNS
 *                  stub and transparent listener; off ({@code sallyport run --no-capture}): the table translates
 *                  nothing and lets in only the proxy port, the guest gets no extra routes
 */
public record SandboxNetwork(String id, Ipv4Subnet subnet, int proxyPort, LiteralAddresses literals, boolean capture) {

    /** Prefix of every name the runner creates (networks, containers, bridge aliases). */
    public static final String NAME_PREFIX = "sallyport-";
    /** Prefix of the runner's nftables tables (family inet). */
    public static final String TABLE_PREFIX = "sallyport_";

    /** Where CNI's host-local IPAM keeps one folder of leases per network name (its default dataDir). */
    public static final Path IPAM_STATE = Path.of("/var/lib/cni/networks");

    private static final Path IPV6_SYSCTLS = Path.of("/proc/sys/net/ipv6");
    private static final Pattern ID = Pattern.compile("[a-z0-9]{4,16}");
    private static final SecureRandom RANDOM = new SecureRandom();

    public SandboxNetwork {
        if (!ID.matcher(id).matches()) {
            throw new IllegalArgumentException("id: '" + id + "' (expected: 4..16 of [a-z0-9])");
        }
        if (proxyPort < 1 || proxyPort > 65533) {
            throw new IllegalArgumentException("proxyPort: " + proxyPort + " (expected: 1..65533)");
        }
        java.util.Objects.requireNonNull(literals, "literals");
    }

    /** Capturing, literal addresses as {@code literals} says. */
    public SandboxNetwork(String id, Ipv4Subnet subnet, int proxyPort, LiteralAddresses literals) {
        this(id, subnet, proxyPort, literals, true);
    }

    /** Capturing only synthetic addresses ({@link LiteralAddresses#NO_ROUTE}). */
    public SandboxNetwork(String id, Ipv4Subnet subnet, int proxyPort) {
        this(id, subnet, proxyPort, LiteralAddresses.NO_ROUTE);
    }

    /** The same network, its table capturing literal addresses as {@code value} says. */
    public SandboxNetwork withLiterals(LiteralAddresses value) {
        return new SandboxNetwork(id, subnet, proxyPort, value, capture);
    }

    /** The same network, capturing or not ({@code --no-capture}). */
    public SandboxNetwork withCapture(boolean value) {
        return new SandboxNetwork(id, subnet, proxyPort, literals, value);
    }

    /** A new network with a random id and a free /24 from {@link SubnetPool}. */
    public static SandboxNetwork allocate(int proxyPort) throws IOException {
        String id = HexFormat.of().formatHex(RANDOM.generateSeed(4));
        return new SandboxNetwork(id, SubnetPool.pick(id, SubnetPool.inUse()), proxyPort);
    }

    /** The nerdctl network name, also the container name and the bridge's alias. */
    public String networkName() {
        return NAME_PREFIX + id;
    }

    /** The nftables table name (family {@code inet}). */
    public String tableName() {
        return TABLE_PREFIX + id;
    }

    /** The bridge interface name nerdctl's bridge plugin uses for {@link #networkName()}. */
    public String bridgeName() {
        return bridgeNameFor(networkName());
    }

    /** nerdctl's rule: {@code "br-" + hex(sha256(name))[:12]} (15 characters, the Linux limit). */
    public static String bridgeNameFor(String nerdctlNetworkName) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(nerdctlNetworkName.getBytes(StandardCharsets.UTF_8));
            return "br-" + HexFormat.of().formatHex(digest).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    /** The bridge's (and the proxy's) address. */
    public String gateway() {
        return subnet.gateway();
    }

    /**
     * The guest's address, fixed by the runner ({@code nerdctl run --ip}): the only source the table lets in from the
     * bridge, and the only peer the gateway's relay takes as this sandbox.
     */
    public String guest() {
        return subnet.host(2);
    }

    /** The proxy URL the guest is given. */
    public String proxyUrl() {
        return "http://" + gateway() + ":" + proxyPort;
    }

    /** Where the proxy's transparent listener takes the guest's TCP to synthetic addresses (DNATed to it). */
    public int transparentPort() {
        return proxyPort + 1;
    }

    /** Where the proxy's DNS stub answers the guest's DNS to the gateway (UDP and TCP, DNATed to it). */
    public int dnsPort() {
        return proxyPort + 2;
    }

    /**
     * The routes the runner adds to the guest's IPAM ({@link CniConflist#addRoutes}): the synthetic prefix via the
     * gateway, and with {@link LiteralAddresses#CAPTURE} a default route via the gateway too, so that TCP to those
     * addresses leaves the guest and meets the table's DNAT on the bridge. Nothing is routed beyond the gateway: the
     * table rejects everything the host would forward. Without capture: none (the guest reaches only the gateway's
     * proxy port, on-link).
     */
    public List<CniConflist.Route> guestRoutes() {
        if (!capture) {
            return List.of();
        }
        List<CniConflist.Route> routes = new ArrayList<>();
        routes.add(new CniConflist.Route(NftRuleset.SYNTHETIC, gateway()));
        if (literals == LiteralAddresses.CAPTURE) {
            routes.add(new CniConflist.Route("0.0.0.0/0", gateway()));
        }
        return List.copyOf(routes);
    }

    /** The nftables table that confines this sandbox. */
    public String ruleset() {
        return NftRuleset.render(tableName(), bridgeName(), gateway(), guest(), proxyPort, transparentPort(),
                dnsPort(), literals, capture);
    }

    /** Creates the bridge with the gateway address, IPv6 off, tagged with our alias so cleanup can find it. */
    public List<HostCommand> bridgeCommands() {
        return bridgeCommands(Files.isDirectory(IPV6_SYSCTLS));
    }

    /**
     * As {@link #bridgeCommands()}; {@code hostHasIpv6} is false on hosts booted with {@code ipv6.disable=1}, which
     * have no {@code /proc/sys/net/ipv6} (the sysctl would fail, and there is no IPv6 to turn off).
     */
    public List<HostCommand> bridgeCommands(boolean hostHasIpv6) {
        String bridge = bridgeName();
        List<HostCommand> commands = new ArrayList<>();
        commands.add(HostCommand.of("ip", "link", "add", "name", bridge, "type", "bridge"));
        commands.add(HostCommand.of("ip", "link", "set", "dev", bridge, "alias", networkName()));
        if (hostHasIpv6) {
            commands.add(HostCommand.of("sysctl", "-q", "-w", "net.ipv6.conf." + bridge + ".disable_ipv6=1"));
        }
        commands.add(HostCommand.of("ip", "addr", "add", gateway() + "/" + subnet.prefix(), "dev", bridge));
        commands.add(HostCommand.of("ip", "link", "set", "dev", bridge, "up"));
        return List.copyOf(commands);
    }

    /** Loads the nftables table (atomically, one {@code nft -f} transaction). */
    public HostCommand firewallCommand() {
        return HostCommand.of("nft", "-f", "-").withStdin(ruleset());
    }

    /** Checks the table is still loaded (exit 0), for the watch during a run. */
    public HostCommand tableCheckCommand() {
        return HostCommand.tolerant("nft", "list", "table", "inet", tableName());
    }

    /**
     * Removes the table, the bridge, and the addresses CNI's host-local IPAM recorded for this network (it keeps
     * them in a folder named after the network, which nothing else removes); each may already be gone.
     */
    public List<HostCommand> teardownCommands() {
        return List.of(
                HostCommand.tolerant("nft", "delete", "table", "inet", tableName()),
                HostCommand.tolerant("ip", "link", "del", "dev", bridgeName()),
                HostCommand.tolerant("rm", "-rf", "--one-file-system", IPAM_STATE.resolve(networkName()).toString()));
    }
}
