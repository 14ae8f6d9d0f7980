package dev.sallyport.proxy.inject;

import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import java.io.PrintStream;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The secret store in force, kept beside the policy engine. Listens for successful policy reloads and builds
 * a new store from the new policy ({@code file:} sources are read again). If that fails the old store stays
 * in force, and each problem goes to stderr and, as a {@code Reloaded "failure"} event, to the audit log and
 * the metrics. {@link #current()} is one volatile read.
 */
public final class SecretsHolder implements ProxyEventListener, AutoCloseable {

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
                store.set(old.reload(next));
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

    @Override
    public void close() {
        store.get().close();
    }

    @Override
    public String toString() {
        return "SecretsHolder[" + store.get() + "]";
    }
}
