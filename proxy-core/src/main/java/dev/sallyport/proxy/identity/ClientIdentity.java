package dev.sallyport.proxy.identity;

import dev.sallyport.policy.Identities;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.Rule;
import dev.sallyport.proxy.limits.ClientKey;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who a client connection is: a sandbox registered with the proxy (its runner's relay presented the sandbox's token
 * before any byte of the sandbox's), or {@link #ANONYMOUS}. {@code name} is what the audit record's {@code identity}
 * says; {@code policy} is what {@code clients:} on rules and secrets match (the name itself unless the registration
 * named a policy); {@code rules} are the sandbox's own rules, tried before the policy's.
 */
public final class ClientIdentity {

    /** A connection that presented no identity. */
    public static final ClientIdentity ANONYMOUS = new ClientIdentity(Identities.ANONYMOUS, Identities.ANONYMOUS,
            List.of());

    private static final AttributeKey<ClientIdentity> KEY = AttributeKey.valueOf("sallyport.identity");

    /** The policy in force and the engine made of it with this sandbox's rules first. */
    private record Combined(PolicyEngine global, PolicyEngine engine) {}

    private final String name;
    private final String policy;
    private final List<Rule> rules;
    private volatile Combined combined;
    /** The connections bound to this identity and still open; closed when the registration is forgotten. */
    private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean forgotten;

    ClientIdentity(String name, String policy, List<Rule> rules) {
        this.name = Objects.requireNonNull(name, "name");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.rules = List.copyOf(rules);
    }

    /** The identity a connection carries: {@link #ANONYMOUS} unless one was set on it. */
    public static ClientIdentity of(Channel channel) {
        ClientIdentity id = channel.attr(KEY).get();
        if (id == null && channel.parent() != null && !(channel.parent() instanceof io.netty.channel.ServerChannel)) {
            id = channel.parent().attr(KEY).get();     // an HTTP/2 stream: its connection's
        }
        return id == null ? ANONYMOUS : id;
    }

    /**
     * Who {@code channel}'s connections, tunnels and exchanges count against: its sandbox when it has one, else
     * its source address (anonymous clients, and every connection before its identity header is read).
     */
    public static ClientKey limitKey(Channel channel) {
        ClientIdentity id = of(channel);
        return id == ANONYMOUS ? ClientKey.of(channel.remoteAddress()) : new ClientKey.Sandbox(id.name());
    }

    /** Marks {@code channel} as this identity's (once, before any of its bytes is decided on). */
    public void bind(Channel channel) {
        channel.attr(KEY).set(this);
        if (this == ANONYMOUS) {
            return;
        }
        connections.add(channel);
        channel.closeFuture().addListener(f -> connections.remove(channel));
        if (forgotten) {
            channel.close();        // resolved just before its registration was forgotten
        }
    }

    /**
     * The registration is gone (its run forgot it, or its lease ran out): every connection bound to it closes, so
     * nothing a forgotten sandbox opened goes on in its name.
     */
    void forgotten() {
        forgotten = true;
        connections.forEach(Channel::close);
    }

    public String name() {
        return name;
    }

    /** The name {@code clients:} matches. */
    public String policy() {
        return policy;
    }

    public List<Rule> rules() {
        return rules;
    }

    /** The engine to decide this identity's traffic: {@code global}, or it with this sandbox's rules first. */
    public PolicyEngine engine(PolicyEngine global) {
        if (rules.isEmpty()) {
            return global;
        }
        Combined c = combined;
        if (c == null || c.global() != global) {
            c = new Combined(global, PolicyEngine.compile(withRulesFirst(global.policy(), rules)));
            combined = c;
        }
        return c.engine();
    }

    static Policy withRulesFirst(Policy p, List<Rule> first) {
        List<Rule> all = new ArrayList<>(first);
        all.addAll(p.rules());
        return new Policy(p.proxy(), p.ca(), p.audit(), p.mode(), p.upstream(), p.network(), all, p.secrets(),
                p.source(), p.registries(), p.git(), p.sandbox());
    }

    @Override
    public String toString() {
        return "ClientIdentity[" + name + (policy.equals(name) ? "" : ", policy=" + policy) + ", rules="
                + rules.size() + "]";
    }
}
