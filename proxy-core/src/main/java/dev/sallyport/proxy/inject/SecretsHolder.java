package dev.sallyport.proxy.inject;

import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import java.io.PrintStream;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The secret store in force, kept beside the policy engine. Listens for successful policy reloads and builds
 * a new store from the new policy ({@code file:} sources are read again). If that fails the old store stays
 * in force, and each problem goes to stderr and, as a {@code Reloaded "failure"} event, to the audit log and
 * the metrics. {@link #current()} is one volatile read.
 *
 * <p>Values the new store no longer holds (a secret removed, or its value changed) are retired, not forgotten:
 * responses stay scrubbed of them (see {@link KnownValues} for the bound). A retired value dropped for the bound
 * gets one warning line and a {@code RetiredValueDropped} event. {@link #close()} wipes every value.
 */
public final class SecretsHolder implements ProxyEventListener, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(SecretsHolder.class);

    private final AtomicReference<SecretStore> store;
    private final ProxyEventListener events;
    private final InstantSource clock;
    private final PrintStream stderr;
    private volatile Supplier<Policy> policy;

    /** @param events where a failed secrets reload is reported (not this holder) */
    public SecretsHolder(SecretStore initial, ProxyEventListener events, InstantSource clock, PrintStream stderr) {
        this.store = new AtomicReference<>(Objects.requireNonNull(initial, "initial"));
        this.events = Objects.requireNonNull(events, "events");
        this.clock = clock;
        this.stderr = stderr;
    }

    /** The store requests use now. */
    public SecretStore current() {
        return store.get();
    }

    /** Where the reloaded policy is read from when a {@code Reloaded "success"} event arrives. */
    public void follow(Supplier<Policy> value) {
        policy = value;
    }

    @Override
    public void on(ProxyEvent event) {
        Supplier<Policy> p = policy;
        if (event instanceof ProxyEvent.Reloaded r && "success".equals(r.result()) && p != null) {
            reload(p.get(), r.source());
        }
    }

    /** Builds the store for {@code next}; true if it is now in force. */
    public boolean reload(Policy next, String source) {
        synchronized (store) {
            SecretStore old = store.get();
            try {
                SecretStore fresh = old.reload(next);
                store.set(fresh);
                retired(fresh.nowInForce(), source);
            } catch (SecretLoadException e) {
                stderr.println("sallyport: secrets reload from " + source + " failed; the old secrets stay in force ("
                        + e.problems().size() + (e.problems().size() == 1 ? " problem):" : " problems):"));
                e.problems().forEach(line -> stderr.println("  " + line));
                events.on(new ProxyEvent.Reloaded(clock.instant(), "failure", source, e.problems()));
                return false;
            }
            old.close();
            return true;
        }
    }

    private void retired(List<String> dropped, String source) {
        for (String name : dropped) {
            LOGGER.warn("retired secret value no longer scrubbed: secret={} source={} reason=bound (at most {} retired"
                    + " values, {} bytes; the oldest goes first)", name, source, KnownValues.MAX_RETIRED,
                    KnownValues.MAX_RETIRED_BYTES);
            events.on(new ProxyEvent.RetiredValueDropped(clock.instant(), name));
        }
    }

    /** Closes the store in force and wipes every value the process loaded (the proxy is stopping). */
    @Override
    public void close() {
        store.get().closeAll();
    }

    @Override
    public String toString() {
        return "SecretsHolder[" + store.get() + "]";
    }
}
