package dev.sallyport.proxy.internal;

import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.policy.Limits;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.proxy.audit.AuditGate;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.limits.Admission;
import dev.sallyport.proxy.reload.Snapshot;
import dev.sallyport.proxy.limits.ClientKey;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.channel.group.ChannelGroup;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime one proxy instance shares across its channels: the current policy, the audit log and the other event
 * listeners, the clock, the counters behind the connection and tunnel limits (the proxy's and each client's), and
 * every open channel (for shutdown).
 */
public final class ProxyContext {

    private static final Logger LOGGER = LoggerFactory.getLogger(ProxyContext.class);

    private final Supplier<Snapshot> snapshots;
    private final AuditGate audit;
    private final ProxyEventListener events;
    private final InstantSource clock;
    private final ChannelGroup channels;
    private final SandboxRegistry sandboxes;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger tunnels = new AtomicInteger();
    private final AtomicInteger exchanges = new AtomicInteger();
    private final ClientSlots clientConnections = new ClientSlots("connections",
            "proxy.limits.max_connections_per_client", ClientSlots.CONNECTION_LIMIT);
    private final ClientSlots clientTunnels = new ClientSlots("tunnels", "proxy.limits.max_tunnels_per_client",
            ClientSlots.TUNNEL_LIMIT);
    private final ClientSlots clientExchanges = new ClientSlots("exchanges", "proxy.limits.max_exchanges_per_client",
            ClientSlots.EXCHANGE_LIMIT);
    private final AtomicLong ids = new AtomicLong();
    private volatile boolean draining;
    private final java.util.Set<InetSocketAddress> self = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** events: every listener but the audit log (metrics, an extra listener), which gets each event after it. */
    public ProxyContext(Supplier<Snapshot> snapshots, AuditGate audit, ProxyEventListener events,
                        InstantSource clock, ChannelGroup channels) {
        this.snapshots = snapshots;
        this.audit = audit;
        this.events = events;
        this.clock = clock;
        this.channels = channels;
        this.sandboxes = new SandboxRegistry(clock);
    }

    /** The policy and secrets in force now: an exchange takes one and decides, injects and scrubs from it. */
    public Snapshot snapshot() { return snapshots.get(); }
    public PolicyEngine engine() { return snapshots.get().engine(); }
    public Policy policy() { return snapshots.get().policy(); }
    public InstantSource clock() { return clock; }
    public ChannelGroup channels() { return channels; }
    /** The sandboxes registered with this proxy: whose token a connection's PROXY v2 header may present. */
    public SandboxRegistry sandboxes() { return sandboxes; }
    public boolean auditAccepting() { return audit.accepting(); }
    public boolean draining() { return draining; }
    public void startDraining() { draining = true; }


    /** Records one of the proxy's own listening addresses: the data path never dials them. */
    public void addSelf(InetSocketAddress address) {
        self.add(address);
    }

    /** True when dialing {@code address:port} would reach this proxy's own listener or admin listener. */
    public boolean isSelf(InetAddress address, int port) {
        for (InetSocketAddress s : self) {
            if (s.getPort() == port && (s.getAddress().isAnyLocalAddress() || s.getAddress().equals(address)
                    || address.isLoopbackAddress() || address.isAnyLocalAddress())) {
                return true;
            }
        }
        return false;
    }

    public String nextId() {
        return Long.toHexString(clock.millis()) + "-" + Long.toHexString(ids.incrementAndGet());
    }

    public void emit(ProxyEvent event) {
        try {
            audit.on(event);
        } catch (RuntimeException e) {
            LOGGER.warn("audit log failed event={} error={}", event.getClass().getSimpleName(), e.toString());
        }
        others(event);
    }

    /**
     * The decision record of a request or tunnel about to be forwarded: true once the audit log has taken it (the
     * other listeners then get it too); false when it refuses, and the caller must refuse ({@code audit_unavailable})
     * instead of forwarding.
     */
    public boolean admit(ProxyEvent.Decided decision) {
        if (!audit.admit(decision)) {
            return false;
        }
        others(decision);
        return true;
    }

    private void others(ProxyEvent event) {
        try {
            events.on(event);
        } catch (RuntimeException e) {
            LOGGER.warn("event listener failed event={} error={}", event.getClass().getSimpleName(), e.toString());
        }
    }

    /** Counts a new connection of client against its limit and the proxy's; nothing is counted unless admitted. */
    public Admission tryOpenConnection(ClientKey client) {
        Limits limits = policy().proxy().limits();
        return open(clientConnections, client, limits.maxConnectionsPerClient(), connections, limits.maxConnections());
    }

    public void connectionClosed(ClientKey client) {
        connections.decrementAndGet();
        clientConnections.release(client, policy().proxy().limits().maxConnectionsPerClient());
    }

    /**
     * Counts an open connection against {@code to} instead of {@code from} (its sandbox, once its identity header
     * named one); false, nothing changed, when {@code to} already holds its limit.
     */
    public boolean moveConnection(ClientKey from, ClientKey to) {
        int limit = policy().proxy().limits().maxConnectionsPerClient();
        if (!clientConnections.tryTake(to, limit)) {
            return false;
        }
        clientConnections.release(from, limit);
        return true;
    }

    /** Counts a new tunnel of client against its limit and the proxy's; nothing is counted unless admitted. */
    public Admission tryOpenTunnel(ClientKey client) {
        Limits limits = policy().proxy().limits();
        return open(clientTunnels, client, limits.maxTunnelsPerClient(), tunnels, limits.maxTunnels());
    }

    public void tunnelClosed(ClientKey client) {
        tunnels.decrementAndGet();
        clientTunnels.release(client, policy().proxy().limits().maxTunnelsPerClient());
    }

    private static Admission open(ClientSlots perClient, ClientKey client, int clientLimit, AtomicInteger total,
                                  int totalLimit) {
        if (!perClient.tryTake(client, clientLimit)) {
            return Admission.CLIENT_LIMIT;
        }
        if (!tryIncrement(total, totalLimit)) {
            perClient.release(client, clientLimit);
            return Admission.PROXY_LIMIT;
        }
        return Admission.ADMITTED;
    }

    /**
     * Takes an exchange slot of client (HTTP/1.1 requests and HTTP/2 streams alike: each holds an upstream connection);
     * false, nothing taken, while it holds {@code max_exchanges_per_client}. Given back by {@link #exchangeReleased}.
     */
    public boolean tryTakeExchange(ClientKey client) {
        return clientExchanges.tryTake(client, policy().proxy().limits().maxExchangesPerClient());
    }

    public void exchangeReleased(ClientKey client) {
        clientExchanges.release(client, policy().proxy().limits().maxExchangesPerClient());
    }

    public void exchangeStarted() { exchanges.incrementAndGet(); }

    public void exchangeFinished() {
        if (exchanges.decrementAndGet() == 0) {
            synchronized (exchanges) {
                exchanges.notifyAll();
            }
        }
    }

    public int openExchanges() { return exchanges.get(); }

    /** Waits until no exchange is open or the deadline passes; true when drained. */
    public boolean awaitNoExchanges(long deadlineNanos) throws InterruptedException {
        synchronized (exchanges) {
            while (exchanges.get() > 0) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                exchanges.wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }

    private static boolean tryIncrement(AtomicInteger counter, int limit) {
        while (true) {
            int now = counter.get();
            if (limit > 0 && now >= limit) {
                return false;
            }
            if (counter.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }
}
