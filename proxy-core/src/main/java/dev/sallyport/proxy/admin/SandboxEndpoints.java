package dev.sallyport.proxy.admin;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.identity.ReportedRefusal;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.reload.Snapshot;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox registrations a runner makes (all behind the admin token):
 *
 * <pre>
 * POST   /sandboxes?identity=NAME[&amp;policy=P][&amp;lease=SECONDS]   body: a policy file whose rules are the sandbox's
 *        201  identity NAME / token HEX / lease SECONDS / placeholder SECRET VALUE (one line each)
 * POST   /sandboxes/NAME/lease?lease=SECONDS       X-Sallyport-Sandbox-Token: HEX    200  lease SECONDS
 * DELETE /sandboxes/NAME                            X-Sallyport-Sandbox-Token: HEX    200  forgotten
 * POST   /sandboxes/NAME/refused?reason=R&amp;source=ADDR  X-Sallyport-Sandbox-Token: HEX    200  recorded
 * </pre>
 * The last is the runner's report of an attempt it refused on the host ({@link ReportedRefusal}: a spoofed source on
 * the VM bridge, a stranger at the gateway relay): one audit record with the sandbox's identity.
 *
 * The body's policy gives rules only (tried before the proxy's): a secret there is refused, because secrets live in
 * the proxy's own policy and are bound to identities with {@code clients:}. The answer lists the placeholders of the
 * proxy's secrets this sandbox may use (those whose {@code clients:} names its policy, or no one).
 */
final class SandboxEndpoints {

    static final String TOKEN_HEADER = "X-Sallyport-Sandbox-Token";
    static final Duration DEFAULT_LEASE = Duration.ofMinutes(2);
    private static final Logger LOGGER = LoggerFactory.getLogger(SandboxEndpoints.class);

    private final SandboxRegistry registry;
    private final Supplier<Snapshot> snapshots;
    private final Consumer<ReportedRefusal> refusals;

    SandboxEndpoints(SandboxRegistry registry, Supplier<Snapshot> snapshots, Consumer<ReportedRefusal> refusals) {
        this.registry = registry;
        this.snapshots = snapshots;
        this.refusals = refusals;
    }

    AdminReply route(HttpMethod method, String uri, String body, String sandboxToken) {
        QueryStringDecoder q = new QueryStringDecoder(uri);
        String[] parts = q.path().substring(1).split("/", -1);
        try {
            if (parts.length == 1 && method.equals(HttpMethod.POST)) {
                return register(q.parameters(), body);
            }
            if (parts.length == 2 && method.equals(HttpMethod.DELETE)) {
                return registry.forget(parts[1], sandboxToken) ? text(HttpResponseStatus.OK, "forgotten\n")
                        : unknown(parts[1]);
            }
            if (parts.length == 3 && parts[2].equals("lease") && method.equals(HttpMethod.POST)) {
                Duration lease = lease(q.parameters());
                Optional<Instant> until = registry.renew(parts[1], sandboxToken, lease);
                return until.isPresent() ? text(HttpResponseStatus.OK, "lease " + lease.toSeconds() + "\n")
                        : unknown(parts[1]);
            }
            if (parts.length == 3 && parts[2].equals("refused") && method.equals(HttpMethod.POST)) {
                return refused(parts[1], sandboxToken, q.parameters());
            }
        } catch (IllegalArgumentException e) {
            return text(HttpResponseStatus.BAD_REQUEST, e.getMessage() + "\n");
        }
        return text(HttpResponseStatus.NOT_FOUND, "not found (expected: POST /sandboxes?identity=NAME, "
                + "POST /sandboxes/NAME/lease, POST /sandboxes/NAME/refused or DELETE /sandboxes/NAME)\n");
    }

    private AdminReply register(Map<String, List<String>> params, String body) {
        String name = one(params, "identity");
        if (name == null) {
            return text(HttpResponseStatus.BAD_REQUEST, "identity: missing (expected: ?identity=NAME)\n");
        }
        String policyName = Optional.ofNullable(one(params, "policy")).orElse(name);
        Policy own;
        try {
            own = body.isBlank() ? null : PolicyLoader.parse(body, "sandbox " + name);
        } catch (PolicyException e) {
            StringBuilder text = new StringBuilder();
            e.problems().forEach(p -> text.append(p).append('\n'));
            return text(HttpResponseStatus.BAD_REQUEST, text.toString());
        }
        if (own != null && !own.secrets().isEmpty()) {
            return text(HttpResponseStatus.BAD_REQUEST, "sandbox " + name + ": secrets: a sandbox brings rules only "
                    + "(expected: the secrets in the proxy's policy, bound with clients: [" + policyName + "])\n");
        }
        SandboxRegistry.Granted granted;
        Duration lease = lease(params);
        try {
            granted = registry.register(name, policyName, own == null ? List.of() : own.rules(), lease);
        } catch (SandboxRegistry.Refused e) {
            return text(HttpResponseStatus.valueOf(e.status()), e.getMessage() + "\n");
        }
        Snapshot snapshot = snapshots.get();
        StringBuilder text = new StringBuilder("identity ").append(name).append('\n')
                .append("token ").append(granted.token()).append('\n')
                .append("lease ").append(lease.toSeconds()).append('\n');
        Map<String, String> placeholders = snapshot.secrets().placeholders();
        for (SecretSpec s : snapshot.policy().secrets()) {
            if (s.usableBy(policyName) && placeholders.containsKey(s.name())) {
                text.append("placeholder ").append(s.name()).append(' ').append(placeholders.get(s.name()))
                        .append('\n');
            }
        }
        LOGGER.info("sandbox registered: identity={} policy={} rules={} lease_s={}", name, policyName,
                own == null ? 0 : own.rules().size(), lease.toSeconds());
        return text(HttpResponseStatus.CREATED, text.toString());
    }

    /** A runner's report of an attempt it refused for its sandbox: audited under the sandbox's identity. */
    private AdminReply refused(String name, String sandboxToken, Map<String, List<String>> params) {
        boolean theirs = registry.resolve(sandboxToken).map(id -> id.name().equals(name)).orElse(false);
        if (!theirs) {
            return unknown(name);
        }
        ReportedRefusal refusal = new ReportedRefusal(name, String.valueOf(one(params, "source")),
                String.valueOf(one(params, "reason")));
        refusals.accept(refusal);
        LOGGER.warn("sandbox {}: its runner refused {} from {}", name, refusal.reason(), refusal.source());
        return text(HttpResponseStatus.OK, "recorded\n");
    }

    private static Duration lease(Map<String, List<String>> params) {
        String value = one(params, "lease");
        if (value == null) {
            return DEFAULT_LEASE;
        }
        try {
            long seconds = Long.parseLong(value);
            if (seconds < 1 || seconds > SandboxRegistry.MAX_LEASE.toSeconds()) {
                throw new NumberFormatException();
            }
            return Duration.ofSeconds(seconds);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("lease: '" + value + "' (expected: seconds, 1.."
                    + SandboxRegistry.MAX_LEASE.toSeconds() + ")", e);
        }
    }

    private static String one(Map<String, List<String>> params, String key) {
        List<String> values = params.get(key);
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new IllegalArgumentException(key + ": given " + values.size() + " times (expected: once)");
        }
        return values.getFirst();
    }

    private static AdminReply unknown(String name) {
        return text(HttpResponseStatus.NOT_FOUND, "sandbox " + name + ": not registered, or not with this token "
                + "(expected: the token its registration answered)\n");
    }

    private static AdminReply text(HttpResponseStatus status, String body) {
        return AdminReply.text(status, body);
    }
}
