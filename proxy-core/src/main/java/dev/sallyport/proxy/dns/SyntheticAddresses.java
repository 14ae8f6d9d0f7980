package dev.sallyport.proxy.dns;

import com.github.benmanes.caffeine.cache.Ticker;
import dev.sallyport.proxy.identity.ClientIdentity;
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
import java.util.function.IntSupplier;

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
 * cannot use, or probe for, the names another one looked up.
 *
 * <p>A registered sandbox ({@link ClientIdentity}: its relay presented its token) has mappings of its own instead: the
 * same name asked by two sandboxes gets two addresses, each naming the name only for its owner (another sandbox
 * connecting to it finds nothing), at most {@code perOwner} of them per owner (so one sandbox that fills its share is
 * refused while the others still get addresses), and all of them go when the sandbox is forgotten ({@link #forget}).
 * Each registered sandbox also has a reserve: until it holds {@code reserve} mappings (fewer when many are registered:
 * the reserves never add up to more than the table), that many stay free for it, so that a few sandboxes filling
 * their shares together cannot leave another one nothing. The clients known by address share one owner and one share,
 * without a reserve. Thread-safe.
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

    /** The owner of the mappings of clients known by their address. */
    private static final Object BY_ADDRESS = new Object();

    private final int capacity;
    private final int perOwner;
    private final int reserve;
    /** How many sandboxes are registered now (asked outside this table's lock). */
    private final IntSupplier registered;
    private final long lifetime;   // nanoseconds
    /** Monotonic: a moved wall clock neither ends every mapping at once nor keeps them. */
    private final Ticker ticker;
    /** By owner and name, least recently asked first. */
    private final LinkedHashMap<Key, Mapping> byName = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<Integer, Mapping> bySlot = new HashMap<>();
    private final Map<Object, Integer> perOwnerCount = new HashMap<>();
    private int cursor;

    /** A mapping's key: {@link #BY_ADDRESS} or a sandbox's identity (by reference: a new registration owns nothing). */
    private record Key(Object owner, String name) {}

    private static final class Mapping {
        final Key key;
        final int slot;
        long asked;   // the ticker's nanoseconds
        /** Who asked, least recent first (mappings of {@link #BY_ADDRESS} only). */
        final LinkedHashSet<InetAddress> clients = new LinkedHashSet<>();

        Mapping(Key key, int slot, long asked) {
            this.key = key;
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
        this(capacity, capacity, lifetime, ticker);
    }

    /** At most {@code capacity} mappings at once, of them at most {@code perOwner} of any one owner; no reserves. */
    public SyntheticAddresses(int capacity, int perOwner, Duration lifetime, Ticker ticker) {
        this(capacity, perOwner, 0, () -> 0, lifetime, ticker);
    }

    /**
     * The same, with {@code reserve} mappings kept free for each of the {@code registered} sandboxes until it holds
     * them (at most the table divided among the sandboxes and the clients known by address).
     */
    public SyntheticAddresses(int capacity, int perOwner, int reserve, IntSupplier registered, Duration lifetime,
                              Ticker ticker) {
        if (capacity < 1 || capacity > SLOTS / 4) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: 1.." + SLOTS / 4 + ")");
        }
        if (perOwner < 1 || perOwner > capacity) {
            throw new IllegalArgumentException("perOwner: " + perOwner + " (expected: 1.." + capacity + ")");
        }
        this.perOwner = perOwner;
        if (reserve < 0 || reserve > perOwner) {
            throw new IllegalArgumentException("reserve: " + reserve + " (expected: 0.." + perOwner + ")");
        }
        this.reserve = reserve;
        this.registered = Objects.requireNonNull(registered, "registered");
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
    public Optional<Slot> assign(String name, InetAddress client) {
        int sandboxes = registered.getAsInt();   // before the lock: the registry calls forget holding its own
        synchronized (this) {
            Optional<Mapping> m = take(new Key(BY_ADDRESS, name), sandboxes);
            m.ifPresent(mapping -> mapping.askedBy(client));
            return m.map(mapping -> new Slot(mapping.slot));
        }
    }

    /** The slot of {@code name} (normalized) of {@code owner}'s own; empty when its share or the table is full. */
    public Optional<Slot> assign(String name, ClientIdentity owner) {
        int sandboxes = registered.getAsInt();
        synchronized (this) {
            return take(new Key(owner, name), sandboxes).map(mapping -> new Slot(mapping.slot));
        }
    }

    private Optional<Mapping> take(Key key, int sandboxes) {
        long now = ticker.read();
        sweep(now);
        Mapping m = byName.get(key);
        if (m != null) {
            m.asked = now;
            return Optional.of(m);
        }
        if (!roomFor(key.owner(), sandboxes) || perOwnerCount.getOrDefault(key.owner(), 0) >= perOwner) {
            return Optional.empty();
        }
        do {
            cursor = cursor % (SLOTS - 2) + 1;    // 1 .. SLOTS-2: neither the network nor the last address
        } while (bySlot.containsKey(cursor));
        m = new Mapping(key, cursor, now);
        byName.put(key, m);
        bySlot.put(m.slot, m);
        perOwnerCount.merge(key.owner(), 1, Integer::sum);
        return Optional.of(m);
    }

    /**
     * True when {@code owner} may take one more mapping: the table has room beyond what the other registered sandboxes
     * are owed (for each, its reserve less what it holds, those that hold none yet included; {@code sandboxes}
     * registered in all).
     */
    private boolean roomFor(Object owner, int sandboxes) {
        if (byName.size() >= capacity) {
            return false;
        }
        int each = Math.min(reserve, capacity / (sandboxes + 1));   // + 1: the clients known by address
        int others = sandboxes - (owner instanceof ClientIdentity ? 1 : 0);
        if (byName.size() + (long) others * each < capacity) {
            return true;   // every reserve fits, whatever the others hold: no need to count
        }
        long owed = 0;
        int holding = 0;
        for (Map.Entry<Object, Integer> e : perOwnerCount.entrySet()) {
            if (e.getKey() instanceof ClientIdentity && e.getKey() != owner) {
                holding++;
                owed += Math.max(0, each - e.getValue());
            }
        }
        return byName.size() + owed + (long) Math.max(0, others - holding) * each < capacity;
    }

    /** The name a synthetic address stands for, while its mapping lives, for a client that asked for it. */
    public synchronized Optional<String> nameFor(InetAddress address, InetAddress client) {
        Mapping m = living(address, BY_ADDRESS);
        return m == null || !m.clients.contains(client) ? Optional.empty() : Optional.of(m.key.name());
    }

    /** The name a synthetic address stands for, while its mapping lives, when it is one of {@code owner}'s. */
    public synchronized Optional<String> nameFor(InetAddress address, ClientIdentity owner) {
        Mapping m = living(address, owner);
        return m == null ? Optional.empty() : Optional.of(m.key.name());
    }

    private Mapping living(InetAddress address, Object owner) {
        int slot = slotOf(address);
        Mapping m = slot < 0 ? null : bySlot.get(slot);
        return m == null || m.key.owner() != owner || ticker.read() - m.asked >= lifetime ? null : m;
    }

    /**
     * Drops every mapping of {@code owner} (a sandbox that was forgotten): its addresses name nothing from now on, and
     * its share is free. No connection can present a forgotten identity again, so its slots need not wait.
     */
    public synchronized void forget(ClientIdentity owner) {
        for (Iterator<Mapping> it = byName.values().iterator(); it.hasNext(); ) {
            Mapping m = it.next();
            if (m.key.owner() == owner) {
                it.remove();
                bySlot.remove(m.slot);
            }
        }
        perOwnerCount.remove(owner);
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
            perOwnerCount.computeIfPresent(m.key.owner(), (owner, n) -> n == 1 ? null : n - 1);
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
