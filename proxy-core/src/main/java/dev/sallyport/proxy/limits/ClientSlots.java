package dev.sallyport.proxy.limits;

import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slots of one kind (connections, tunnels or exchanges) that each client holds, against a per-client limit. The first
 * refusal of a client starts an episode: one WARN line, then none until the client holds at most half its limit
 * again (a DEBUG line then says how many were refused). A client holding nothing has no entry. Thread-safe: each
 * call is one {@link ConcurrentHashMap#compute} on the client's entry.
 */
public final class ClientSlots {

    private static final Logger LOGGER = LoggerFactory.getLogger(ClientSlots.class);

    /** Reason codes of the refusals (429) for a client that holds its connection or tunnel limit. */
    public static final String CONNECTION_LIMIT = "client_connection_limit";
    public static final String TUNNEL_LIMIT = "client_tunnel_limit";
    /** Reason code of a request (HTTP/1.1, or one HTTP/2 stream) refused while its client holds its exchange limit. */
    public static final String EXCHANGE_LIMIT = "client_exchange_limit";

    /** One client's count; {@code refused > 0} while it is in an episode. Changed only inside compute. */
    private static final class Usage {
        volatile int held;   // read outside compute by held()
        long refused;
    }

    /** What a call did and saw, read after its compute (the entry itself may change again at once). */
    private record Seen(boolean taken, int held, long refused) {}

    private final String what;
    private final String limitKey;
    private final String reason;
    private final ConcurrentHashMap<ClientKey, Usage> clients = new ConcurrentHashMap<>();

    /**
     * @param what     the slots, plural ({@code connections})
     * @param limitKey the policy key of the limit ({@code proxy.limits.max_connections_per_client})
     * @param reason   the refusal's reason code ({@code client_connection_limit})
     */
    public ClientSlots(String what, String limitKey, String reason) {
        this.what = what;
        this.limitKey = limitKey;
        this.reason = reason;
    }

    public String reason() {
        return reason;
    }

    /** Takes a slot for client; false (nothing taken, the refusal counted) when it already holds limit. */
    @SuppressWarnings("NonAtomicVolatileUpdate")   // held changes only inside compute, under the map's lock
    public boolean tryTake(ClientKey client, int limit) {
        Seen[] seen = new Seen[1];
        clients.compute(client, (k, u) -> {
            Usage usage = u != null ? u : new Usage();
            boolean taken = usage.held < limit;
            if (taken) {
                usage.held++;
            } else {
                usage.refused++;
            }
            seen[0] = new Seen(taken, usage.held, usage.refused);
            return usage;
        });
        boolean taken = seen[0].taken();
        if (!taken && seen[0].refused() == 1) {
            LOGGER.warn("client {}: {} open {} reached {}; its new {} are refused (429 {}) until it holds at most {}"
                    + " (expected: fewer {} from one client, or a higher limit)", client, seen[0].held(), what,
                    limitKey, what, reason, limit / 2, what);
        }
        return taken;
    }

    /** Gives back a slot of client; its episode ends once it holds at most half of limit. */
    @SuppressWarnings("NonAtomicVolatileUpdate")   // held changes only inside compute, under the map's lock
    public void release(ClientKey client, int limit) {
        Seen[] seen = new Seen[1];
        clients.computeIfPresent(client, (k, usage) -> {
            usage.held--;
            long refused = usage.refused;
            if (refused > 0 && usage.held <= limit / 2) {
                usage.refused = 0;
            }
            seen[0] = new Seen(false, usage.held, refused - usage.refused);
            return usage.held <= 0 && usage.refused == 0 ? null : usage;
        });
        if (seen[0] != null && seen[0].refused() > 0) {
            LOGGER.debug("client {}: below {} again; {} {} were refused", client, limitKey, seen[0].refused(), what);
        }
    }

    /** The slots client holds now (0 for a client without an entry). */
    public int held(ClientKey client) {
        Usage usage = clients.get(client);
        return usage == null ? 0 : usage.held;
    }
}
