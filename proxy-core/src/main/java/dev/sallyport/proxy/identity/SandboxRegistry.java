package dev.sallyport.proxy.identity;

import dev.sallyport.policy.Identities;
import dev.sallyport.policy.Rule;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The sandboxes registered with this proxy, each until its runner forgets it or its lease runs out. A registration
 * gets a token (32 random bytes, hex) that only the runner learns: its relay, on the host, hands it to the proxy at
 * the start of every connection it relays for the sandbox (a PROXY v2 TLV, see {@link RelayHeader}), so the sandbox
 * never holds it and cannot present another's. Only a digest of each token is kept; an expired registration is
 * gone for every lookup at once (and swept on the next registration).
 */
public final class SandboxRegistry {

    /** The PROXY v2 TLV type (from the range for application use) whose value is a registration's token. */
    public static final int TLV_TYPE = RelayHeader.TOKEN_TLV;
    /** The longest lease a registration may ask for; the runner renews well before it runs out. */
    public static final Duration MAX_LEASE = Duration.ofHours(24);
    /** At most this many sandboxes at once: registration is authenticated, but a runaway runner must not grow this. */
    public static final int MAX_SANDBOXES = 4096;

    /**
     * One registered sandbox: when its lease ends by the wall clock (what the runner is told), and by the monotonic
     * clock (what ends it, so that the machine's clock moving neither ends every lease at once nor keeps one on).
     */
    public record Registration(ClientIdentity identity, Instant expires, long deadlineNanos) {}

    /** What a successful registration gives the runner: the token (never logged) and when the lease ends. */
    public record Granted(String identity, String token, Instant expires) {
        @Override
        public String toString() {
            return "Granted[" + identity + ", token=hidden, expires=" + expires + "]";
        }
    }

    /** A registration refused: the admin answer's status and one line. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        Refused(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }

        public int status() {
            return status;
        }
    }

    private final InstantSource clock;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Registration> byDigest = new ConcurrentHashMap<>();
    private final Map<String, String> digestByName = new ConcurrentHashMap<>();
    private volatile Consumer<ClientIdentity> onForgotten = identity -> { };

    public SandboxRegistry(InstantSource clock) {
        this.clock = clock;
    }

    /**
     * Runs {@code action} for each identity once its registration is gone (forgotten, or its lease ran out), after its
     * connections were closed: what the proxy holds for it elsewhere (its DNS mappings) goes too.
     */
    public void onForgotten(Consumer<ClientIdentity> action) {
        this.onForgotten = Objects.requireNonNull(action, "action");
    }

    /**
     * Registers {@code name} (its rules matched as {@code policy}, which may be {@code name} itself) with its own
     * {@code rules} for {@code lease}.
     */
    public synchronized Granted register(String name, String policy, List<Rule> rules, Duration lease) throws Refused {
        if (!Identities.isValidName(name) || name.equals(Identities.ANONYMOUS)) {
            throw new Refused(400, "identity: '" + name + "' (expected: " + Identities.EXPECTED + ", not "
                    + Identities.ANONYMOUS + ")");
        }
        if (!Identities.isValidName(policy)) {
            throw new Refused(400, "policy: '" + policy + "' (expected: " + Identities.EXPECTED + ")");
        }
        if (lease.isNegative() || lease.isZero() || lease.compareTo(MAX_LEASE) > 0) {
            throw new Refused(400, "lease: " + lease.toSeconds() + " s (expected: 1.." + MAX_LEASE.toSeconds() + ")");
        }
        sweep();
        if (digestByName.containsKey(name)) {
            throw new Refused(409, "identity: '" + name + "' is registered already (expected: a name no running "
                    + "sandbox has)");
        }
        if (digestByName.size() >= MAX_SANDBOXES) {
            throw new Refused(503, "sandboxes: " + MAX_SANDBOXES + " registered (expected: fewer at once)");
        }
        byte[] raw = new byte[32];
        random.nextBytes(raw);
        String token = HexFormat.of().formatHex(raw);
        String digest = digest(token);
        Instant expires = clock.instant().plus(lease);
        byDigest.put(digest, new Registration(new ClientIdentity(name, policy, rules), expires, deadline(lease)));
        digestByName.put(name, digest);
        return new Granted(name, token, expires);
    }

    /** Extends {@code name}'s lease by {@code lease} from now, when {@code token} is its token; else empty. */
    public synchronized Optional<Instant> renew(String name, String token, Duration lease) {
        Registration r = current(token);
        if (r == null || !r.identity().name().equals(name) || lease.isNegative() || lease.compareTo(MAX_LEASE) > 0) {
            return Optional.empty();
        }
        Instant expires = clock.instant().plus(lease);
        byDigest.put(digestByName.get(name), new Registration(r.identity(), expires, deadline(lease)));
        return Optional.of(expires);
    }

    /** Forgets {@code name} when {@code token} is its token; true when it was registered. */
    public synchronized boolean forget(String name, String token) {
        Registration r = current(token);
        if (r == null || !r.identity().name().equals(name)) {
            return false;
        }
        byDigest.remove(digestByName.remove(name));
        r.identity().forgotten();
        onForgotten.accept(r.identity());
        return true;
    }

    /** The identity whose token this is, while its lease runs; empty for any other text. */
    public Optional<ClientIdentity> resolve(String token) {
        Registration r = current(token);
        return r == null ? Optional.empty() : Optional.of(r.identity());
    }

    /** The identity named {@code name} while registered (for the metrics and for {@code policy explain}). */
    public Optional<ClientIdentity> named(String name) {
        String digest = digestByName.get(name);
        Registration r = digest == null ? null : byDigest.get(digest);
        return r == null || expired(r) ? Optional.empty() : Optional.of(r.identity());
    }

    /** How many sandboxes are registered now. */
    public int size() {
        sweep();
        return digestByName.size();
    }

    /**
     * How many sandboxes are registered, leases that ran out since the last {@link #sweep} (each second) included:
     * without a sweep, cheap enough to ask for every DNS question.
     */
    public synchronized int count() {
        return digestByName.size();
    }

    private Registration current(String token) {
        if (token == null || token.length() != 64) {
            return null;
        }
        Registration r = byDigest.get(digest(token));
        return r == null || expired(r) ? null : r;
    }

    private boolean expired(Registration r) {
        return System.nanoTime() - r.deadlineNanos() >= 0;
    }

    private static long deadline(Duration lease) {
        return System.nanoTime() + lease.toNanos();
    }

    /** Forgets every registration whose lease ran out and closes its connections (the proxy calls it each second). */
    public synchronized void sweep() {
        byDigest.entrySet().removeIf(e -> {
            boolean gone = expired(e.getValue());
            if (gone) {
                digestByName.remove(e.getValue().identity().name(), e.getKey());
                e.getValue().identity().forgotten();
                onForgotten.accept(e.getValue().identity());
            }
            return gone;
        });
    }

    private static String digest(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: every JDK has it)", e);
        }
    }

    @Override
    public String toString() {
        return "SandboxRegistry[" + digestByName.size() + " sandboxes]";
    }
}
