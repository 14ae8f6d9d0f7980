package dev.sallyport.proxy.reload;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.PolicyProblem;
import dev.sallyport.policy.ProxySettings;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.inject.SecretLoadException;
import dev.sallyport.proxy.inject.SecretStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy and the secrets in force, as one {@link Snapshot} swapped whole on reload. {@link #snapshot()} is one
 * volatile read; an exchange takes it once. A reload re-reads the source file and the secrets it names ({@code
 * file:} sources again): a broken file or a secret that cannot be read keeps the old snapshot, and the errors
 * (with lines) go to stderr and, as a {@code Reloaded "failure"} event, to the audit log and the metrics.
 *
 * <p>Values the new secrets no longer hold (a secret removed, or its value changed) are retired, not forgotten:
 * responses stay scrubbed of them (see {@code KnownValues} for the bound). A retired value dropped for the bound
 * gets one warning line and a {@code RetiredValueDropped} event. {@link #wipeSecrets()} wipes every value.
 *
 * <p>Keys bound at start ({@code proxy.listen}, {@code proxy.admin}, {@code proxy.admin_token}, {@code ca},
 * {@code audit}) keep their running values across a reload; if the file changed them, the reload still
 * applies everything else and says that those keys need a restart.
 */
public final class PolicyHolder implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PolicyHolder.class);

    private final AtomicReference<Snapshot> snapshot;
    private final Path source;
    private final ProxyEventListener events;
    private final InstantSource clock;
    private final PrintStream stderr;
    private final Object reloadLock = new Object();
    private byte[] lastContent;   // guarded by reloadLock: hash of the content last tried
    private PolicyTriggers triggers;  // guarded by reloadLock

    /** A holder without secrets: a reload to a policy that has some fails (tests and tools). */
    public PolicyHolder(PolicyEngine initial, Path source, ProxyEventListener events) {
        this(new Snapshot(initial, SecretStore.empty()), source, events, InstantSource.system(), System.err);
    }

    /** @param source nullable: the policy file; null (built-in default) means reload has nothing to read */
    public PolicyHolder(Snapshot initial, Path source, ProxyEventListener events) {
        this(initial, source, events, InstantSource.system(), System.err);
    }

    /** {@link #PolicyHolder(Snapshot, Path, ProxyEventListener)} reading wall time from {@code clock}. */
    public PolicyHolder(Snapshot initial, Path source, ProxyEventListener events, InstantSource clock) {
        this(initial, source, events, clock, System.err);
    }

    PolicyHolder(Snapshot initial, Path source, ProxyEventListener events, InstantSource clock, PrintStream stderr) {
        this.snapshot = new AtomicReference<>(Objects.requireNonNull(initial, "initial"));
        this.source = source == null ? null : source.toAbsolutePath().normalize();
        this.events = Objects.requireNonNull(events, "events");
        this.clock = clock;
        this.stderr = stderr;
        this.lastContent = this.source == null ? null : ContentHash.of(this.source);
    }

    /** The policy engine and secrets in force now. */
    public Snapshot snapshot() {
        return snapshot.get();
    }

    /** The engine in force now. */
    public PolicyEngine current() {
        return snapshot.get().engine();
    }

    /** The policy file, or null when running on the built-in default. */
    public Path source() {
        return source;
    }

    /** Re-reads the source file and swaps the engine if it is valid; a broken file keeps the old engine. */
    public ReloadResult reload() {
        synchronized (reloadLock) {
            if (source == null) {
                String error = "reload: no policy file (the proxy runs on the built-in default; expected: start it"
                        + " with --config FILE to reload)";
                stderr.println("sallyport: " + error);
                events.on(new ProxyEvent.Reloaded(clock.instant(), "failure", null, List.of(error)));
                return new ReloadResult(false, List.of(error));
            }
            lastContent = ContentHash.of(source);
            return load();
        }
    }

    /** Reloads only when the file's content differs from the content last tried (file-watch debounce). */
    ReloadResult reloadIfChanged() {
        synchronized (reloadLock) {
            byte[] now = ContentHash.of(source);
            if (now.length == 0 || Arrays.equals(now, lastContent)) {   // gone for now (mid-rename), or same
                return null;
            }
            lastContent = now;
            return load();
        }
    }

    /**
     * Reloads when the policy file changes (a watch on its folder, so editors that replace the file by rename
     * and symlink swaps are seen; a change is acted on once per new content) and on SIGHUP where the JVM
     * allows a handler. Idempotent; stopped by {@link #close()}.
     */
    public void watchFileAndSighup() throws IOException {
        synchronized (reloadLock) {
            if (triggers == null) {
                triggers = PolicyTriggers.start(this);
            }
        }
    }

    /** Whether SIGHUP reloads (false until {@link #watchFileAndSighup()}, or where signals are unavailable). */
    boolean sighupInstalled() {
        synchronized (reloadLock) {
            return triggers != null && triggers.sighupInstalled();
        }
    }

    @Override
    public void close() {
        PolicyTriggers t;
        synchronized (reloadLock) {
            t = triggers;
            triggers = null;
        }
        if (t != null) {
            t.close();
        }
    }

    /** Wipes every secret value the process loaded (the proxy has stopped; nothing injects or scrubs any more). */
    public void wipeSecrets() {
        snapshot.get().secrets().closeAll();
    }

    private ReloadResult load() {
        Policy loaded;
        try {
            if (Files.isRegularFile(source) && Files.readString(source).isBlank()) {
                // An empty file would read as a valid deny-all policy without secrets; on reload it is far more
                // likely a writer caught between truncating the file and writing it.
                return failed(List.of(source + ": is empty (expected: a policy; the one in force stays, since an "
                        + "empty file is what a writer leaves between truncating and writing)"));
            }
            loaded = PolicyLoader.load(source);
        } catch (IOException e) {
            return failed(List.of(source + ": cannot be read: " + e.getMessage() + " (expected: a readable policy file)"));
        } catch (PolicyException e) {
            List<String> errors = e.problems().stream().map(PolicyProblem::toString).toList();
            return failed(errors);
        }
        PolicyEngine compiled;
        List<String> notes = new ArrayList<>();
        Snapshot old = snapshot.get();
        try {
            compiled = PolicyEngine.compile(keepStartupKeys(old.policy(), loaded, notes));
        } catch (RuntimeException e) {
            return failed(List.of(source + ": cannot be applied: " + e.getMessage()));
        }
        SecretStore secrets;
        try {
            secrets = old.secrets().reload(compiled.policy());
        } catch (SecretLoadException e) {
            return failed(e.problems());
        }
        snapshot.set(new Snapshot(compiled, secrets));
        // The old store is not closed: exchanges that took the old snapshot may still inject from it (after their
        // dial). The garbage collector frees it once the last of them ends; its values are known values, wiped
        // when the proxy stops.
        List<String> dropped = secrets.nowInForce();
        LOGGER.info("policy reloaded: source={} rules={} secrets={} mode={}", source, loaded.rules().size(),
                loaded.secrets().size(), loaded.mode());
        notes.forEach(n -> stderr.println("sallyport: " + n));
        retired(dropped);
        events.on(new ProxyEvent.Reloaded(clock.instant(), "success", source.toString(), List.of()));
        return new ReloadResult(true, List.of(), notes);
    }

    private void retired(List<String> dropped) {
        for (String name : dropped) {
            LOGGER.warn("retired secret value no longer scrubbed: secret={} source={} reason=bound (at most {} retired"
                    + " values, {} bytes; the oldest goes first)", name, source, SecretStore.MAX_RETIRED_VALUES,
                    SecretStore.MAX_RETIRED_BYTES);
            events.on(new ProxyEvent.RetiredValueDropped(clock.instant(), name));
        }
    }

    private ReloadResult failed(List<String> errors) {
        stderr.println("sallyport: policy reload from " + source + " failed; the old policy stays in force ("
                + errors.size() + (errors.size() == 1 ? " problem):" : " problems):"));
        errors.forEach(e -> stderr.println("  " + e));
        events.on(new ProxyEvent.Reloaded(clock.instant(), "failure", source.toString(), errors));
        return new ReloadResult(false, errors);
    }

    /** The new policy with the running values of the keys that only a restart can change. */
    static Policy keepStartupKeys(Policy running, Policy loaded, List<String> notes) {
        ProxySettings was = running.proxy();
        ProxySettings now = loaded.proxy();
        note(notes, "proxy.listen", was.listen(), now.listen());
        note(notes, "proxy.admin", was.admin(), now.admin());
        note(notes, "proxy.admin_token", tokenSource(was), tokenSource(now));
        note(notes, "proxy.transparent", was.transparent(), now.transparent());
        note(notes, "proxy.dns", was.dns(), now.dns());
        note(notes, "ca", running.ca(), loaded.ca());
        note(notes, "audit", running.audit(), loaded.audit());
        ProxySettings kept = new ProxySettings(was.listen(), was.admin(), now.limits(), now.timeouts(),
                was.adminTokenEnv(), was.adminTokenFile(), now.http2(), was.transparent(), was.dns(),
                now.metricsIdentities());
        note(notes, "upstream.proxy", running.upstream().proxy(), loaded.upstream().proxy());
        return new Policy(kept, running.ca(), running.audit(), loaded.mode(),
                loaded.upstream().withProxy(running.upstream().proxy()), loaded.network(),
                loaded.rules(), loaded.secrets(), loaded.source(), loaded.registries(), loaded.git(), loaded.sandbox());
    }

    private static void note(List<String> notes, String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            notes.add("policy reload: " + key + " changed (" + was + " -> " + now + "); it takes effect only after"
                    + " a restart, still using " + was);
        }
    }

    private static String tokenSource(ProxySettings s) {
        return s.adminTokenEnv() != null ? "env:" + s.adminTokenEnv()
                : s.adminTokenFile() != null ? "file:" + s.adminTokenFile() : "none";
    }
}
