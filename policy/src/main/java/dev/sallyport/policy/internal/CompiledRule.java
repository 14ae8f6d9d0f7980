package dev.sallyport.policy.internal;

import dev.sallyport.policy.Action;
import dev.sallyport.policy.Cidr;
import dev.sallyport.policy.IpAddress;
import dev.sallyport.policy.PathPattern;
import dev.sallyport.policy.Rule;
import java.util.Set;

/** A {@link Rule} in the shape the matcher wants: arrays, no boxing, precomputed flags. */
public final class CompiledRule {

    /** What a rule lacked for a request, best first; used to explain a miss. */
    public enum Miss { NONE, PORT, CLIENT, METHOD, PATH }

    public final Rule rule;
    public final int index;
    public final boolean deny;
    public final boolean restrictsRequests;
    /** {@code allow_encoded_slash: true}: this rule may allow a path with an escaped slash. */
    public final boolean encodedSlash;
    private final int[] ports;
    private final Cidr[] cidrs;
    private final String[] methods;
    private final PathPattern[] paths;
    private final Set<String> clients;

    public CompiledRule(Rule rule, int index) {
        this.rule = rule;
        this.index = index;
        this.deny = rule.action() == Action.DENY;
        this.restrictsRequests = rule.restrictsRequests();
        this.encodedSlash = rule.allowEncodedSlash();
        this.ports = rule.ports().stream().mapToInt(Integer::intValue).sorted().toArray();
        this.cidrs = rule.cidrs().toArray(new Cidr[0]);
        this.methods = rule.methods().toArray(new String[0]);
        this.paths = rule.paths().toArray(new PathPattern[0]);
        this.clients = rule.clients();
    }

    public boolean hasCidrs() {
        return cidrs.length > 0;
    }

    public boolean cidrMatches(IpAddress ip) {
        for (Cidr c : cidrs) {
            if (c.contains(ip)) {
                return true;
            }
        }
        return false;
    }

    public boolean portMatches(int port) {
        for (int p : ports) {
            if (p == port) {
                return true;
            }
        }
        return false;
    }

    public boolean clientMatches(String client) {
        return clients.isEmpty() || (client != null && clients.contains(client));
    }

    public boolean methodMatches(String method) {
        if (methods.length == 0) {
            return true;
        }
        for (String m : methods) {
            if (m.equals(method)) {
                return true;
            }
        }
        return false;
    }

    public boolean pathMatches(String path) {
        if (paths.length == 0) {
            return true;
        }
        for (PathPattern p : paths) {
            if (p.matches(path)) {
                return true;
            }
        }
        return false;
    }

    /** What this rule lacks for a request whose host already matched; NONE when it matches fully. */
    public Miss missFor(int port, String method, String path, String client) {
        if (!portMatches(port)) {
            return Miss.PORT;
        }
        if (!clientMatches(client)) {
            return Miss.CLIENT;
        }
        if (!methodMatches(method)) {
            return Miss.METHOD;
        }
        if (!pathMatches(path)) {
            return Miss.PATH;
        }
        return Miss.NONE;
    }
}
