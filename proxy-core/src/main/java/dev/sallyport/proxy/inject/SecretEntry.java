package dev.sallyport.proxy.inject;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * One configured secret inside a {@link SecretStore}: its spec, placeholder and current value (or why it
 * has none). A lazy secret whose source is missing is retried on use, at most every
 * {@link #RETRY_EVERY}. Thread-safe.
 */
final class SecretEntry implements AutoCloseable {

    static final Duration RETRY_EVERY = Duration.ofSeconds(5);
    static final int MAX_FILE_BYTES = 64 * 1024;

    /** The current state: a value, or the one-line reason there is none. */
    sealed interface State {
        record Loaded(SecretValue value) implements State {}
        record Missing(String problem, Instant triedAt) implements State {}
    }

    final int index;
    final SecretSpec spec;
    final String placeholder;
    final byte[] placeholderBytes;
    private final String where;
    private final String[] headersLower;
    private final Function<String, String> env;
    private final InstantSource clock;
    private final AtomicReference<State> state = new AtomicReference<>();

    SecretEntry(int index, SecretSpec spec, String placeholder, Function<String, String> env, InstantSource clock) {
        this.index = index;
        this.spec = spec;
        this.placeholder = placeholder;
        this.placeholderBytes = placeholder.getBytes(StandardCharsets.ISO_8859_1);
        this.where = "secrets[" + index + "] " + spec.name();
        this.headersLower = spec.headers().stream().map(h -> h.toLowerCase(Locale.ROOT)).toArray(String[]::new);
        this.env = env;
        this.clock = clock;
        state.set(read());
    }

    String name() {
        return spec.name();
    }

    State state() {
        return state.get();
    }

    /** The value now, retrying a lazy source if due; null if still unavailable. */
    SecretValue valueOrRetry() {
        State s = state.get();
        if (s instanceof State.Missing m && spec.lazy()
                && !clock.instant().isBefore(m.triedAt().plus(RETRY_EVERY))) {
            State fresh = read();
            if (state.compareAndSet(s, fresh) && fresh instanceof State.Loaded loaded) {
                return loaded.value();
            }
            s = state.get();
        }
        return s instanceof State.Loaded l && !l.value().isWiped() ? l.value() : null;
    }

    boolean boundTo(String normalizedHost) {
        for (HostPattern p : spec.hosts()) {
            if (p.matches(normalizedHost)) {
                return true;
            }
        }
        return false;
    }

    boolean allowsHeader(CharSequence name) {
        for (String h : headersLower) {
            if (h.contentEquals(name.toString().toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    private State read() {
        Instant now = clock.instant();
        return switch (spec.from()) {
            case SecretSource.Env e -> {
                String v = env.apply(e.variable());
                if (v == null) {
                    yield new State.Missing(where + ": environment variable " + e.variable() + " is not set"
                            + " (expected: the variable set in the proxy's environment, or lazy: true)", now);
                }
                yield validated(v.getBytes(StandardCharsets.UTF_8), "environment variable " + e.variable(), now);
            }
            case SecretSource.File f -> {
                try (InputStream in = Files.newInputStream(f.path())) {
                    byte[] raw = in.readNBytes(MAX_FILE_BYTES + 1);
                    if (raw.length > MAX_FILE_BYTES) {
                        Arrays.fill(raw, (byte) 0);
                        yield new State.Missing(where + ": file " + f.path() + " is larger than "
                                + MAX_FILE_BYTES + " bytes (expected: a file holding one token)", now);
                    }
                    yield validated(raw, "file " + f.path(), now);
                } catch (NoSuchFileException ex) {
                    yield new State.Missing(where + ": file " + f.path() + " does not exist"
                            + " (expected: a readable file holding the token, or lazy: true)", now);
                } catch (IOException ex) {
                    yield new State.Missing(where + ": file " + f.path() + " cannot be read: "
                            + ex.getClass().getSimpleName() + " (expected: a file readable by the proxy)", now);
                }
            }
        };
    }

    private State validated(byte[] raw, String source, Instant now) {
        try {
            return new State.Loaded(SecretValue.fromSource(raw));
        } catch (IllegalArgumentException bad) {
            return new State.Missing(where + ": " + source + ": " + bad.getMessage(), now);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    @Override
    public void close() {
        if (state.get() instanceof State.Loaded l) {
            l.value().close();
        }
    }

    @Override
    public String toString() {
        return "SecretEntry[" + where + ", state=" + (state.get() instanceof State.Loaded ? "loaded" : "missing") + "]";
    }
}
