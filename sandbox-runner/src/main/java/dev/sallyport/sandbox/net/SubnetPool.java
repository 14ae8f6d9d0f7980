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

    /** The IPv4 networks in use on this host: interface addresses and the kernel's IPv4 routes. */
    public static List<Ipv4Subnet> inUse() throws IOException {
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
