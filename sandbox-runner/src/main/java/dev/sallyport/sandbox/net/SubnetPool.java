package dev.sallyport.sandbox.net;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where sandbox networks take their addresses: /24 networks out of {@code 10.213.0.0/16}, a range that neither
 * Docker (172.17+/16, 192.168) nor nerdctl's defaults (10.4.0.0/24 upward) hand out. A network is picked only if
 * it overlaps nothing the host already uses (interface addresses and routes).
 */
public final class SubnetPool {

    /** The pool sandboxes are carved from. */
    public static final Ipv4Subnet POOL = Ipv4Subnet.parse("10.213.0.0/16");

    private SubnetPool() {
    }

    /**
     * Picks the first /24 in the pool, starting at a slot derived from {@code id} so concurrent runners rarely
     * race for the same one, that overlaps none of {@code taken}.
     */
    public static Ipv4Subnet pick(String id, Collection<Ipv4Subnet> taken) {
        int slots = 1 << (24 - POOL.prefix());
        int start = Math.floorMod(id.hashCode(), slots);
        for (int i = 0; i < slots; i++) {
            int slot = (start + i) % slots;
            Ipv4Subnet candidate = new Ipv4Subnet(POOL.base() + (slot << 8), 24);
            if (taken.stream().noneMatch(candidate::overlaps)) {
                return candidate;
            }
        }
        throw new IllegalStateException("subnet pool " + POOL + ": every /24 is in use (expected: a free one; "
                + "run 'sallyport cleanup' to remove networks left by crashed runs)");
    }

    /** Where nerdctl keeps its networks' conflists (rootful), also in one folder per containerd namespace. */
    public static final Path CNI_CONFIGS = Path.of("/etc/cni/net.d");

    private static final Pattern CONFLIST_SUBNET = Pattern.compile(
            "\"subnet\"\\s*:\\s*\"([0-9]{1,3}(?:\\.[0-9]{1,3}){3})/([0-9]{1,2})\"");

    /**
     * The IPv4 networks in use on this host: interface addresses, the kernel's IPv4 routes, and the subnets of every
     * CNI network declared in {@link #CNI_CONFIGS} (nerdctl refuses a subnet that overlaps one, even when its bridge
     * is gone, as after a reboot).
     */
    public static List<Ipv4Subnet> inUse() throws IOException {
        List<Ipv4Subnet> used = new ArrayList<>(liveNetworks());
        used.addAll(declared(CNI_CONFIGS));
        return used;
    }

    /** The IPv4 subnets named in the conflists of {@code dir} and its subfolders (one level, as nerdctl reads). */
    static List<Ipv4Subnet> declared(Path dir) throws IOException {
        List<Ipv4Subnet> subnets = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return subnets;
        }
        List<Path> files = new ArrayList<>();
        try (Stream<Path> top = Files.list(dir)) {
            for (Path entry : top.toList()) {
                if (Files.isDirectory(entry)) {
                    try (Stream<Path> nested = Files.list(entry)) {
                        files.addAll(nested.toList());
                    }
                } else {
                    files.add(entry);
                }
            }
        }
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (!Files.isRegularFile(file) || !(name.endsWith(".conflist") || name.endsWith(".conf")
                    || name.endsWith(".json"))) {
                continue;
            }
            Matcher matcher = CONFLIST_SUBNET.matcher(Files.readString(file));
            while (matcher.find()) {
                int prefix = Math.max(8, Math.min(30, Integer.parseInt(matcher.group(2))));
                try {
                    int address = Ipv4Subnet.parseAddress(matcher.group(1));
                    subnets.add(new Ipv4Subnet(address & (-1 << (32 - prefix)), prefix));
                } catch (IllegalArgumentException notAnAddress) {
                    // not a subnet nerdctl could have written; CNI would refuse it as well
                }
            }
        }
        return subnets;
    }

    private static List<Ipv4Subnet> liveNetworks() throws IOException {
        List<Ipv4Subnet> used = new ArrayList<>();
        try {
            for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
                for (InterfaceAddress address : nic.getInterfaceAddresses()) {
                    if (address.getAddress() instanceof Inet4Address v4) {
                        int value = java.nio.ByteBuffer.wrap(v4.getAddress()).getInt();
                        int prefix = Math.max(8, Math.min(30, address.getNetworkPrefixLength()));
                        used.add(new Ipv4Subnet(value & (-1 << (32 - prefix)), prefix));
                    }
                }
            }
        } catch (SocketException e) {
            throw new IOException("listing network interfaces failed: " + e.getMessage(), e);
        }
        Path routes = Path.of("/proc/net/route");
        if (Files.isReadable(routes)) {
            used.addAll(parseProcRoutes(Files.readAllLines(routes)));
        }
        return used;
    }

    /** Parses {@code /proc/net/route} (little-endian hex destination and mask); default routes are skipped. */
    static List<Ipv4Subnet> parseProcRoutes(List<String> lines) {
        List<Ipv4Subnet> routes = new ArrayList<>();
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length < 8) {
                continue;
            }
            int destination = Integer.reverseBytes(Integer.parseUnsignedInt(fields[1], 16));
            int mask = Integer.reverseBytes(Integer.parseUnsignedInt(fields[7], 16));
            int prefix = Integer.bitCount(mask);
            if (prefix >= 8) {
                int clamped = Math.min(30, prefix);
                routes.add(new Ipv4Subnet(destination & (-1 << (32 - clamped)), clamped));
            }
        }
        return routes;
    }
}
