package dev.sallyport.proxy.inject;

import dev.sallyport.policy.Identities;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.SecretSpec;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The secrets of one policy snapshot: values read from their sources, placeholders, and the patterns
 * that find them in requests and responses. Immutable apart from lazy secrets becoming available.
 * Thread-safe: one store serves every connection; {@link #exchange(String)} gives the per-request view.
 *
 * <p>On policy reload build a new store with {@link #reload(Policy)} (files are read again) and swap it
 * in with the policy; exchanges already running keep the store they started with. {@link #close()}
 * wipes the values; an exchange that injects from a closed store is refused {@code secret_unavailable}
 * (fail closed), while its response scrubbing keeps working (the patterns are separate).
 *
 * <p>Scrubbing is wider than the store: a store and every store reloaded from it share one
 * {@link KnownValues}, every value the process loaded (in force or retired by a reload), and responses are
 * scrubbed of all of them. {@link #closeAll()} wipes those too, when the proxy stops.
 */
public final class SecretStore implements AutoCloseable {

    /** How many values a reload retired stay scrubbed at most (the oldest go first beyond). */
    public static final int MAX_RETIRED_VALUES = KnownValues.MAX_RETIRED;
    /** How many bytes of retired values stay scrubbed at most. */
    public static final int MAX_RETIRED_BYTES = KnownValues.MAX_RETIRED_BYTES;

    private static final SecretStore EMPTY = new SecretStore(List.of(), null, System::getenv, InstantSource.system(),
            new KnownValues());

    private final List<SecretEntry> entries;
    private final Placeholders placeholders;
    private final Function<String, String> env;
    private final InstantSource clock;
    private final KnownValues known;
    private volatile StorePatterns patterns;

    private SecretStore(List<SecretEntry> entries, Placeholders placeholders, Function<String, String> env,
                        InstantSource clock, KnownValues known) {
        this.entries = List.copyOf(entries);
        this.placeholders = placeholders;
        this.env = env;
        this.clock = clock;
        this.known = known;
        this.patterns = StorePatterns.build(this.entries);
        for (SecretEntry e : this.entries) {
            if (e.state() instanceof SecretEntry.State.Loaded l) {
                known.add(e, l.value());
            }
        }
    }

    /** A store without secrets: injects nothing, refuses nothing, scrubs nothing. */
    public static SecretStore empty() {
        return EMPTY;
    }

    /** Reads every secret of {@code policy} from the process environment and the file system. */
    public static SecretStore load(Policy policy, Placeholders placeholders) throws SecretLoadException {
        return load(policy.secrets(), placeholders, System::getenv, InstantSource.system());
    }

    /**
     * Reads every secret. A non-lazy secret whose source is missing or invalid is a problem; all problems
     * are reported together. A lazy one is loaded when it can be and otherwise refused at use.
     */
    public static SecretStore load(List<SecretSpec> specs, Placeholders placeholders, Function<String, String> env,
                                   InstantSource clock) throws SecretLoadException {
        return load(specs, placeholders, env, clock, new KnownValues());
    }

    private static SecretStore load(List<SecretSpec> specs, Placeholders placeholders, Function<String, String> env,
                                    InstantSource clock, KnownValues known) throws SecretLoadException {
        if (specs.isEmpty()) {
            return new SecretStore(List.of(), placeholders, env, clock, known);
        }
        List<SecretEntry> entries = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < specs.size(); i++) {
            SecretSpec spec = specs.get(i);
            String ph;
            try {
                ph = placeholders.placeholderFor(spec);
            } catch (UncheckedIOException e) {
                throw new SecretLoadException(List.of("secrets[" + i + "] " + spec.name() + ": placeholder key: "
                        + e.getMessage()));
            }
            String other = seen.putIfAbsent(ph, spec.name());
            if (other != null) {
                problems.add("secrets[" + i + "] " + spec.name() + ": placeholder is the same as " + other
                        + "'s (expected: a distinct placeholder per secret)");
            }
            SecretEntry e = new SecretEntry(i, spec, ph, env, clock);
            if (e.state() instanceof SecretEntry.State.Missing m && !spec.lazy()) {
                problems.add(m.problem());
            }
            entries.add(e);
        }
        if (!problems.isEmpty()) {
            entries.forEach(SecretEntry::close);
            throw new SecretLoadException(problems);
        }
        return new SecretStore(entries, placeholders, env, clock, known);
    }

    /**
     * A new store for {@code policy}'s secrets with the same placeholders, environment, clock and known values;
     * re-reads files. Call {@link #nowInForce()} on it once it replaced this one.
     */
    public SecretStore reload(Policy policy) throws SecretLoadException {
        if (placeholders == null) {
            if (policy.secrets().isEmpty()) {
                return this;
            }
            throw new SecretLoadException(List.of("secrets: this proxy was started without a secret store and"
                    + " cannot load secrets on reload (expected: restart it with the policy that has them)"));
        }
        return load(policy.secrets(), placeholders, env, clock, known);
    }

    /**
     * This store replaced the one before it: known values it does not hold are retired (still scrubbed, within
     * the bound of {@link KnownValues}). Returns the secrets whose oldest retired values were dropped for the
     * bound and are no longer scrubbed.
     */
    public List<String> nowInForce() {
        return known.inForce(entries);
    }

    /** True if the policy has no secrets (nothing to inject or refuse); responses may still need scrubbing. */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** True if there is nothing to inject, refuse or scrub: no secrets now and no value ever loaded before. */
    public boolean idle() {
        return entries.isEmpty() && known.isEmpty();
    }

    /** Secret names in policy order. */
    public List<String> names() {
        return entries.stream().map(SecretEntry::name).toList();
    }

    /** Name to placeholder, in policy order (what {@code sallyport secrets env} prints). */
    public Map<String, String> placeholders() {
        Map<String, String> out = new LinkedHashMap<>();
        entries.forEach(e -> out.put(e.name(), e.placeholder));
        return Collections.unmodifiableMap(out);
    }

    /**
     * True if some secret is bound to {@code normalizedHost}, or was when one of the known values was loaded (that
     * host received it): its exchanges force identity and decode responses.
     */
    public boolean sensitive(String normalizedHost) {
        for (SecretEntry e : entries) {
            if (e.boundTo(normalizedHost)) {
                return true;
            }
        }
        return known.boundTo(normalizedHost);
    }

    /**
     * The secrets view of one request/response exchange to {@code normalizedHost}: the host the proxy
     * checked and bound to the CONNECT target, never a Host header taken on trust. {@code leg} is how the
     * request goes upstream: over {@link UpstreamLeg#CLEARTEXT} only secrets with {@code allow_cleartext}
     * are injected, the others refused ({@code secret_cleartext}).
     */
    public ExchangeSecrets exchange(String normalizedHost, UpstreamLeg leg) {
        return exchange(normalizedHost, leg, Identities.ANONYMOUS);
    }

    /**
     * {@link #exchange(String, UpstreamLeg)} for a request of {@code client} (the name {@code clients:} matches): a
     * placeholder of a secret bound to other clients is refused ({@code secret_wrong_client}) and never swapped.
     */
    public ExchangeSecrets exchange(String normalizedHost, UpstreamLeg leg, String client) {
        return new ExchangeSecrets(this, normalizedHost, leg, client);
    }

    /** {@link #exchange(String, UpstreamLeg)} for a request that goes upstream over TLS. */
    public ExchangeSecrets exchange(String normalizedHost) {
        return exchange(normalizedHost, UpstreamLeg.TLS);
    }

    List<SecretEntry> entries() {
        return entries;
    }

    /** The current request patterns; rebuilt when a lazy secret turns up. */
    StorePatterns patterns() {
        return patterns;
    }

    /** What responses are scrubbed of now: every value the process loaded, in all forms (changes on reload). */
    PatternSet scrubPatterns() {
        return known.patterns();
    }

    KnownValues known() {
        return known;
    }

    /**
     * True when {@code value} holds a real value this process ever loaded, in any of its forms: what an HTTP/2
     * encoder must never put in its HPACK table (a later request on the connection would carry it as an index).
     */
    public boolean holdsRealValue(CharSequence value) {
        PatternSet set = known.patterns();
        if (set.isEmpty() || value.length() < 2) {
            return false;
        }
        byte[] bytes = value.toString().getBytes(StandardCharsets.UTF_8);
        return !set.findAll(bytes, bytes.length).isEmpty();
    }

    /** Value of {@code e} now (retrying a lazy source), rebuilding the patterns if it just appeared. */
    SecretValue valueOf(SecretEntry e) {
        boolean had = e.state() instanceof SecretEntry.State.Loaded;
        SecretValue v = e.valueOrRetry();
        if (v != null && !had) {
            synchronized (this) {
                patterns = StorePatterns.build(entries);
            }
            known.add(e, v);
        }
        return v;
    }

    @Override
    public void close() {
        entries.forEach(SecretEntry::close);
    }

    /** Closes this store and wipes every known value and this store's patterns: the proxy is stopping. */
    public void closeAll() {
        close();
        known.close();
        patterns.request().wipe();
    }

    @Override
    public String toString() {
        return "SecretStore[secrets=" + names() + "]";
    }
}
