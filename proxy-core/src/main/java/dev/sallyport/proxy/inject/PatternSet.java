package dev.sallyport.proxy.inject;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A fixed set of byte patterns searched at every position of a buffer. A 65,536-bit filter on the first
 * two bytes rejects almost every position with one load; the few survivors are compared against the
 * patterns that start with that byte, longest first. Patterns are at least 2 bytes long.
 * Immutable and thread-safe; {@link #toString()} shows counts, never bytes.
 */
final class PatternSet {

    /** What a matched pattern stands for: whose secret, and whether it is a placeholder or a real value. */
    enum Kind { PLACEHOLDER, PLACEHOLDER_ENCODED, VALUE }

    /** One pattern. {@code owner} indexes the store's secrets; -1 for per-exchange extras. */
    record Pattern(byte[] bytes, int owner, Kind kind) {
        Pattern {
            if (bytes.length < 2) {
                throw new IllegalArgumentException("pattern: " + bytes.length + " bytes (expected: >= 2)");
            }
        }

        int length() {
            return bytes.length;
        }

        @Override
        public String toString() {
            return "Pattern[owner=" + owner + ", kind=" + kind + ", length=" + bytes.length + "]";
        }
    }

    static final PatternSet EMPTY = new PatternSet(List.of());

    private final long[] pairFilter;
    private final Pattern[][] byFirstByte;
    private final int maxLength;
    private final int size;

    PatternSet(List<Pattern> patterns) {
        this.size = patterns.size();
        this.pairFilter = new long[65536 / 64];
        List<List<Pattern>> buckets = new ArrayList<>(256);
        for (int i = 0; i < 256; i++) {
            buckets.add(new ArrayList<>());
        }
        int max = 0;
        for (Pattern p : patterns) {
            int pair = (p.bytes[0] & 0xFF) << 8 | (p.bytes[1] & 0xFF);
            pairFilter[pair >>> 6] |= 1L << pair;
            buckets.get(p.bytes[0] & 0xFF).add(p);
            max = Math.max(max, p.length());
        }
        this.byFirstByte = new Pattern[256][];
        for (int i = 0; i < 256; i++) {
            List<Pattern> bucket = buckets.get(i);
            bucket.sort(Comparator.comparingInt(Pattern::length).reversed());
            byFirstByte[i] = bucket.isEmpty() ? null : bucket.toArray(Pattern[]::new);
        }
        this.maxLength = max;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int maxLength() {
        return maxLength;
    }

    /**
     * The first position in {@code [from, to)} where a pattern could start (its first two bytes pass the
     * filter, using bytes before {@code end}), or {@code to}. The tight loop of every scan.
     */
    int nextCandidate(byte[] buf, int from, int to, int end) {
        if (size == 0) {
            return to;
        }
        int last = Math.min(to, end - 1);
        long[] filter = pairFilter;
        for (int i = from; i < last; i++) {
            int pair = (buf[i] & 0xFF) << 8 | (buf[i + 1] & 0xFF);
            if ((filter[pair >>> 6] & (1L << pair)) != 0) {
                return i;
            }
        }
        return to;
    }

    /** The longest pattern that occurs at {@code pos} using only bytes before {@code end}, or null. */
    Pattern longestAt(byte[] buf, int pos, int end) {
        if (pos + 1 >= end) {
            return null;
        }
        int pair = (buf[pos] & 0xFF) << 8 | (buf[pos + 1] & 0xFF);
        if ((pairFilter[pair >>> 6] & (1L << pair)) == 0) {
            return null;
        }
        Pattern[] candidates = byFirstByte[buf[pos] & 0xFF];
        if (candidates == null) {
            return null;
        }
        for (Pattern p : candidates) {
            int len = p.bytes.length;
            if (pos + len <= end && Arrays.equals(buf, pos, pos + len, p.bytes, 0, len)) {
                return p;
            }
        }
        return null;
    }

    /**
     * True if {@code buf[pos, end)} is a proper prefix of some pattern: a match could start at {@code pos}
     * once more bytes arrive.
     */
    boolean prefixAt(byte[] buf, int pos, int end) {
        int have = end - pos;
        if (have <= 0 || have >= maxLength) {
            return false;
        }
        if (have >= 2) {
            int pair = (buf[pos] & 0xFF) << 8 | (buf[pos + 1] & 0xFF);
            if ((pairFilter[pair >>> 6] & (1L << pair)) == 0) {
                return false;
            }
        }
        Pattern[] candidates = byFirstByte[buf[pos] & 0xFF];
        if (candidates == null) {
            return false;
        }
        for (Pattern p : candidates) {
            if (p.bytes.length > have && Arrays.equals(buf, pos, end, p.bytes, 0, have)) {
                return true;
            }
        }
        return false;
    }

    /** Every position with a match in {@code [0, end)}, longest pattern per position. */
    List<Hit> findAll(byte[] buf, int end) {
        List<Hit> hits = null;
        for (int i = nextCandidate(buf, 0, end, end); i + 1 < end; i = nextCandidate(buf, i + 1, end, end)) {
            Pattern p = longestAt(buf, i, end);
            if (p != null) {
                if (hits == null) {
                    hits = new ArrayList<>(2);
                }
                hits.add(new Hit(i, p));
            }
        }
        return hits == null ? List.of() : hits;
    }

    /** Zeroes the bytes of every pattern (when the process ends); nothing matches afterwards. */
    void wipe() {
        for (Pattern[] bucket : byFirstByte) {
            if (bucket != null) {
                for (Pattern p : bucket) {
                    Arrays.fill(p.bytes, (byte) 0);
                }
            }
        }
    }

    /** A match at {@code position}. */
    record Hit(int position, Pattern pattern) {}

    @Override
    public String toString() {
        return "PatternSet[patterns=" + size + ", maxLength=" + maxLength + "]";
    }
}
