package dev.sallyport.proxy.dns;

import com.github.benmanes.caffeine.cache.Ticker;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The names the DNS stub has answered, each with a synthetic address of its own: slot {@code n} is
 * {@code 198.18.0.0 + n} (of 198.18.0.0/15) and {@code PREFIX6 + n} (of a ULA /96). A mapping lives for
 * {@code lifetime} after the name was last asked for; {@link #nameFor} finds only living mappings. Its slot is
 * reused only after a second {@code lifetime} (a client that cached the answer too long finds no name, never another
 * name), and only when the cursor that hands out slots comes round to it again. At most {@code capacity} mappings,
 * living or waiting, exist at once, far fewer than there are slots: a flood of names is refused ({@link #assign}
 * empty) instead of taking over an address that another name still has.
 *
 * <p>A mapping is also only good for the clients that asked for it (by address, up to {@value #CLIENTS_PER_NAME} per
 * name, the least recent forgotten first): one client of a proxy that several share (containers on a host's bridge)
 * cannot use, or probe for, the names another one looked up. Thread-safe.
 */
public final class SyntheticAddresses {

    /** 198.18.0.0/15 (RFC 2544, benchmarking: never routed, so no real host is hidden behind it). */
    public static final String PREFIX4 = "198.18.0.0/15";
    /** The ULA /96 of the AAAA answers. */
    public static final String PREFIX6 = "fd5a:11b0:7f00:53::/96";
    private static final int BASE4 = (198 << 24) | (18 << 16);
    private static final int SLOTS = 1 << 17;
    /** How many clients one mapping remembers; one forgotten asks again (the answers' TTL is short anyway). */
    static final int CLIENTS_PER_NAME = 256;
    private static final byte[] BASE6 = {(byte) 0xfd, 0x5a, 0x11, (byte) 0xb0, 0x7f, 0x00, 0x00, 0x53, 0, 0, 0, 0};

    private final int capacity;
    private final long lifetime;   // nanoseconds
    /** Monotonic: a moved wall clock neither ends every mapping at once nor keeps them. */
    private final Ticker ticker;
    /** By name, least recently asked first. */
    private final LinkedHashMap<String, Mapping> byName = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<Integer, Mapping> bySlot = new HashMap<>();
    private int cursor;

    private static final class Mapping {
        final String name;
        final int slot;
        long asked;   // the ticker's nanoseconds
        /** Who asked, least recent first. */
        final LinkedHashSet<InetAddress> clients = new LinkedHashSet<>();

        Mapping(String name, int slot, long asked) {
            this.name = name;
            this.slot = slot;
            this.asked = asked;
        }

        void askedBy(InetAddress client) {
            clients.remove(client);
            clients.add(client);
            if (clients.size() > CLIENTS_PER_NAME) {
                clients.removeFirst();
            }
        }
    }

    public SyntheticAddresses(int capacity, Duration lifetime, Ticker ticker) {
        if (capacity < 1 || capacity > SLOTS / 4) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: 1.." + SLOTS / 4 + ")");
        }
        if (lifetime.isNegative() || lifetime.isZero()) {
            throw new IllegalArgumentException("lifetime: " + lifetime + " (expected: > 0)");
        }
        this.capacity = capacity;
        this.lifetime = lifetime.toNanos();
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /**
     * The slot of {@code name} (normalized) for {@code client}, refreshed or newly taken; empty when every mapping is
     * in use.
     */
    public synchronized Optional<Slot> assign(String name, InetAddress client) {
        long now = ticker.read();
        sweep(now);
        Mapping m = byName.get(name);
        if (m != null) {
            m.asked = now;
            m.askedBy(client);
            return Optional.of(new Slot(m.slot));
        }
        if (byName.size() >= capacity) {
            return Optional.empty();
        }
        do {
            cursor = cursor % (SLOTS - 2) + 1;    // 1 .. SLOTS-2: neither the network nor the last address
        } while (bySlot.containsKey(cursor));
        m = new Mapping(name, cursor, now);
        m.askedBy(client);
        byName.put(name, m);
        bySlot.put(m.slot, m);
        return Optional.of(new Slot(m.slot));
    }

    /** The name a synthetic address stands for, while its mapping lives, for a client that asked for it. */
    public synchronized Optional<String> nameFor(InetAddress address, InetAddress client) {
        int slot = slotOf(address);
        Mapping m = slot < 0 ? null : bySlot.get(slot);
        if (m == null || ticker.read() - m.asked >= lifetime || !m.clients.contains(client)) {
            return Optional.empty();
        }
        return Optional.of(m.name);
    }

    /** True when {@code address} lies in one of the synthetic prefixes (mapped or not). */
    public static boolean isSynthetic(InetAddress address) {
        return slotOf(address) >= 0;
    }

    /** How many mappings exist (living or waiting for their slot to be free). */
    public synchronized int size() {
        return byName.size();
    }

    /** Drops mappings whose slot is free again (asked longer than two lifetimes ago), oldest first. */
    private void sweep(long now) {
        for (Iterator<Mapping> it = byName.values().iterator(); it.hasNext(); ) {
            Mapping m = it.next();
            if (now - m.asked < 2 * lifetime) {
                return;
            }
            it.remove();
            bySlot.remove(m.slot);
        }
    }

    private static int slotOf(InetAddress address) {
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            int v = ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
            return (v & ~(SLOTS - 1)) == BASE4 ? v & (SLOTS - 1) : -1;
        }
        if (address instanceof Inet6Address) {
            for (int i = 0; i < BASE6.length; i++) {
                if (b[i] != BASE6[i]) {
                    return -1;
                }
            }
            int v = ((b[12] & 0xff) << 24) | ((b[13] & 0xff) << 16) | ((b[14] & 0xff) << 8) | (b[15] & 0xff);
            return v >= 0 && v < SLOTS ? v : -1;
        }
        return -1;
    }

    /** One mapping's slot: its IPv4 and IPv6 address. */
    public record Slot(int index) {
        public Inet4Address v4() {
            int v = BASE4 + index;
            return (Inet4Address) address(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
        }

        public Inet6Address v6() {
            byte[] b = java.util.Arrays.copyOf(BASE6, 16);
            b[12] = (byte) (index >>> 24);
            b[13] = (byte) (index >>> 16);
            b[14] = (byte) (index >>> 8);
            b[15] = (byte) index;
            return (Inet6Address) address(b);
        }

        private static InetAddress address(byte[] bytes) {
            try {
                return InetAddress.getByAddress(bytes);
            } catch (UnknownHostException e) {
                throw new IllegalStateException("4 or 16 bytes are always an address", e);
            }
        }
    }
}
