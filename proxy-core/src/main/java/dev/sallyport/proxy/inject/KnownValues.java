package dev.sallyport.proxy.inject;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.proxy.inject.PatternSet.Kind;
import dev.sallyport.proxy.inject.PatternSet.Pattern;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Every real value the process has loaded, for scrubbing: the values of the store in force and the values a
 * reload removed or changed ("retired"). Responses are scrubbed of all of them, whatever the current policy says,
 * because an upstream that once received a value can send it back at any time. One instance lives as long as the
 * proxy and is shared by every store it builds on reload.
 *
 * <p>Bound: at most {@value #MAX_RETIRED} retired values and {@value #MAX_RETIRED_BYTES} bytes of them (the values
 * in force are not counted). Beyond that the value retired longest ago is dropped, and {@link #inForce} names it so
 * the holder can warn and count it. {@link #close()} zeroes every copy and every pattern built from them.
 * Thread-safe: changes are rare (reloads, lazy sources appearing) and rebuild one immutable {@link PatternSet}
 * that readers take with one volatile read.
 */
final class KnownValues implements AutoCloseable {

    static final int MAX_RETIRED = 64;
    static final int MAX_RETIRED_BYTES = 256 * 1024;

    /** Whether a value is in the store in force, or was retired by a reload (and when, for dropping the oldest). */
    sealed interface Standing {
        record InForce() implements Standing {}
        record Retired(long order) implements Standing {}
    }

    /** One value: a private copy, the secret it came from and that secret's hosts (which received it). */
    private record Known(SecretValue value, String secret, List<HostPattern> hosts, List<Pattern> forms,
                         Standing standing) {
        Known with(Standing next) {
            return new Known(value, secret, hosts, forms, next);
        }

        @Override
        public String toString() {
            return "Known[secret=" + secret + ", standing=" + standing + "]";
        }
    }

    private final List<Known> known = new ArrayList<>();
    private volatile PatternSet patterns = PatternSet.EMPTY;
    private volatile List<Known> snapshot = List.of();
    private long retirements;
    private boolean closed;

    /** The patterns of every known value in all its forms (what responses are scrubbed of). */
    PatternSet patterns() {
        return patterns;
    }

    boolean isEmpty() {
        return snapshot.isEmpty();
    }

    /** True if {@code normalizedHost} is one of the hosts some known value was bound to (it may send it back). */
    boolean boundTo(String normalizedHost) {
        for (Known k : snapshot) {
            for (HostPattern p : k.hosts()) {
                if (p.matches(normalizedHost)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Adds the value {@code e} holds now (in force); a value already known is in force again. */
    synchronized void add(SecretEntry e, SecretValue value) {
        if (closed) {
            return;
        }
        byte[] v = value.copyBytes();
        try {
            int at = indexOf(v);
            if (at >= 0) {
                known.set(at, known.get(at).with(new Standing.InForce()));
            } else {
                List<Pattern> forms = new ArrayList<>();
                for (byte[] form : StorePatterns.valueForms(v)) {
                    forms.add(new Pattern(form, -1, Kind.VALUE));
                }
                known.add(new Known(SecretValue.of(v), e.name(), List.copyOf(e.spec.hosts()), forms,
                        new Standing.InForce()));
            }
            publish();
        } finally {
            Arrays.fill(v, (byte) 0);
        }
    }

    /**
     * After {@code entries} became the store in force: every known value none of them holds is retired (the
     * oldest retired beyond the bound are dropped). Returns the names of the secrets whose dropped values are
     * no longer scrubbed, oldest first.
     */
    synchronized List<String> inForce(List<SecretEntry> entries) {
        List<byte[]> current = new ArrayList<>();
        for (SecretEntry e : entries) {
            if (e.state() instanceof SecretEntry.State.Loaded l && !l.value().isWiped()) {
                current.add(l.value().copyBytes());
            }
        }
        try {
            for (int i = 0; i < known.size(); i++) {
                Known k = known.get(i);
                boolean held = holds(current, k.value());
                if (held && k.standing() instanceof Standing.Retired) {
                    known.set(i, k.with(new Standing.InForce()));
                } else if (!held && k.standing() instanceof Standing.InForce) {
                    known.set(i, k.with(new Standing.Retired(++retirements)));
                }
            }
        } finally {
            current.forEach(b -> Arrays.fill(b, (byte) 0));
        }
        List<String> dropped = dropBeyondBound();
        publish();
        return dropped;
    }

    private List<String> dropBeyondBound() {
        List<String> dropped = new ArrayList<>();
        while (true) {
            int count = 0;
            long bytes = 0;
            int oldest = -1;
            long oldestOrder = Long.MAX_VALUE;
            for (int i = 0; i < known.size(); i++) {
                if (known.get(i).standing() instanceof Standing.Retired r) {
                    count++;
                    bytes += known.get(i).value().length();
                    if (r.order() < oldestOrder) {
                        oldestOrder = r.order();
                        oldest = i;
                    }
                }
            }
            if (count <= MAX_RETIRED && bytes <= MAX_RETIRED_BYTES) {
                return dropped;
            }
            Known gone = known.remove(oldest);
            dropped.add(gone.secret());
            wipe(gone);
        }
    }

    private int indexOf(byte[] v) {
        for (int i = 0; i < known.size(); i++) {
            if (same(known.get(i).value(), v)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean holds(List<byte[]> values, SecretValue value) {
        for (byte[] v : values) {
            if (same(value, v)) {
                return true;
            }
        }
        return false;
    }

    private static boolean same(SecretValue value, byte[] v) {
        byte[] mine = value.copyBytes();
        try {
            return MessageDigest.isEqual(mine, v);
        } finally {
            Arrays.fill(mine, (byte) 0);
        }
    }

    private void publish() {
        List<Pattern> all = new ArrayList<>();
        known.forEach(k -> all.addAll(k.forms()));
        patterns = all.isEmpty() ? PatternSet.EMPTY : new PatternSet(all);
        snapshot = List.copyOf(known);
    }

    private static void wipe(Known k) {
        k.value().close();
        k.forms().forEach(p -> Arrays.fill(p.bytes(), (byte) 0));
    }

    /** How many values are known, by standing. */
    record Counts(int inForce, int retired) {}

    synchronized Counts counts() {
        int inForce = 0;
        for (Known k : known) {
            inForce += k.standing() instanceof Standing.InForce ? 1 : 0;
        }
        return new Counts(inForce, known.size() - inForce);
    }

    /** Zeroes every copy and pattern; nothing is scrubbed or added afterwards (the process is ending). */
    @Override
    public synchronized void close() {
        closed = true;
        known.forEach(KnownValues::wipe);
        known.clear();
        patterns = PatternSet.EMPTY;
        snapshot = List.of();
    }

    @Override
    public String toString() {
        Counts c = counts();
        return "KnownValues[inForce=" + c.inForce() + ", retired=" + c.retired() + "]";
    }
}
