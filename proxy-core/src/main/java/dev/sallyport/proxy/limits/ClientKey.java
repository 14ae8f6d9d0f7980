package dev.sallyport.proxy.limits;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * Who a per-client limit counts against: a sandbox registered with the proxy (the identity its runner's relay
 * presented, never a value the workload sends: every relayed sandbox connects from the host's loopback, so its
 * address would make all of them one client), else where a TCP client comes from.
 */
public sealed interface ClientKey {

    /** IPv6 clients are counted per /64: a host usually owns a whole /64 and can rotate through it at will. */
    int IPV6_PREFIX = 64;

    /**
     * One IPv4 address, or one IPv6 /64 given by its network address.
     *
     * @param network      the address with every bit past prefixLength clear
     * @param prefixLength 32 for IPv4, {@value #IPV6_PREFIX} for IPv6
     */
    record SourceNetwork(InetAddress network, int prefixLength) implements ClientKey {
        public SourceNetwork {
            int expected = network instanceof Inet4Address ? 32 : IPV6_PREFIX;
            if (prefixLength != expected) {
                throw new IllegalArgumentException("prefixLength: " + prefixLength + " (expected: " + expected
                        + " for " + network.getHostAddress() + ")");
            }
            if (!network.equals(masked(network, prefixLength))) {
                throw new IllegalArgumentException("network: " + network.getHostAddress() + " has bits past /"
                        + prefixLength + " (expected: a network address)");
            }
        }

        /** {@code 192.0.2.7}, or {@code 2001:db8:1:2::/64}. */
        @Override
        public String toString() {
            if (network instanceof Inet4Address) {
                return network.getHostAddress();
            }
            byte[] b = network.getAddress();
            StringBuilder text = new StringBuilder();
            for (int group = 0; group < IPV6_PREFIX / 16; group++) {
                text.append(Integer.toHexString(((b[2 * group] & 0xff) << 8) | (b[2 * group + 1] & 0xff))).append(':');
            }
            return (text.toString().equals("0:0:0:0:") ? ":" : text.toString()) + ":/" + prefixLength;
        }
    }

    /** A registered sandbox, by the name its registration gave it (unique among the live ones). */
    record Sandbox(String name) implements ClientKey {
        @Override
        public String toString() {
            return "sandbox " + name;
        }
    }

    /** A client whose address is not an IP address (a Unix socket, an embedded channel): all count as one. */
    record Unattributed() implements ClientKey {
        @Override
        public String toString() {
            return "unattributed";
        }
    }

    /** The key of a client connected from remote. An IPv4-mapped IPv6 address counts as its IPv4 address. */
    static ClientKey of(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
            return new Unattributed();
        }
        InetAddress address = inet.getAddress();
        if (address instanceof Inet6Address v6 && isMapped(v6.getAddress())) {
            address = byAddress(Arrays.copyOfRange(v6.getAddress(), 12, 16));
        }
        int prefix = address instanceof Inet4Address ? 32 : IPV6_PREFIX;
        return new SourceNetwork(masked(address, prefix), prefix);
    }

    private static boolean isMapped(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    private static InetAddress masked(InetAddress address, int prefix) {
        byte[] bytes = address.getAddress();   // a copy, without a scope: every zone of a prefix is one network
        for (int bit = prefix; bit < bytes.length * 8; bit++) {
            bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return byAddress(bytes);
    }

    private static InetAddress byAddress(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of " + bytes.length + " bytes", e);
        }
    }
}
