package dev.sallyport.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the sandbox may use of the host: memory (with tmpfs contents, under a cgroup), tasks (processes and
 * threads), the size of each memory-backed folder, and inotify instances and watches. How each is enforced
 * depends on the host (cgroup v2 or v1 where the runner can create one, rlimits otherwise): the module README
 * says which applies when.
 *
 * @param memoryBytes      memory of the whole sandbox (cgroup), or of each process (rlimit fallback)
 * @param pids             tasks (processes and threads) of the whole sandbox
 * @param tmpfsBytes       the size of each of /tmp, /dev/shm and the home folder (all memory-backed)
 * @param inotifyInstances inotify instances of the whole sandbox (of the host user's budget)
 * @param inotifyWatches   inotify watches of the whole sandbox (of the host user's budget)
 */
public record ResourceLimits(long memoryBytes, int pids, long tmpfsBytes, int inotifyInstances, int inotifyWatches) {
    public static final long MIB = 1L << 20;
    public static final long GIB = 1L << 30;
    /** Default memory: a JVM build with a few forked test JVMs, or an npm install, fits. */
    public static final long DEFAULT_MEMORY = 8 * GIB;
    /** Default task limit: build tools start hundreds of threads; a fork bomb stops here. */
    public static final int DEFAULT_PIDS = 4096;
    /** Default size of each tmpfs (caches a build keeps on disk are better given with --allow-write). */
    public static final long DEFAULT_TMPFS = 2 * GIB;
    /** The setup JVM inside and the command need at least this much memory. */
    public static final long MIN_MEMORY = 128 * MIB;
    /** The setup JVM inside runs about 20 threads. */
    public static final int MIN_PIDS = 32;
    /** More than any number sysctl prints. */
    private static final int SYSCTL_MAX = 64;
    private static final Pattern SIZE = Pattern.compile("(\\d{1,15})([kmgt]?)(i?b)?");

    public ResourceLimits {
        if (memoryBytes < MIN_MEMORY) {
            throw new IllegalArgumentException("memory: " + memoryBytes + " bytes (expected: at least "
                    + MIN_MEMORY / MIB + " MiB)");
        }
        if (pids < MIN_PIDS) {
            throw new IllegalArgumentException("pids: " + pids + " (expected: at least " + MIN_PIDS + ")");
        }
        if (tmpfsBytes < MIB) {
            throw new IllegalArgumentException("tmpfs-size: " + tmpfsBytes + " bytes (expected: at least 1 MiB)");
        }
        if (inotifyInstances < 1 || inotifyWatches < 1) {
            throw new IllegalArgumentException("inotify: " + inotifyInstances + " instances, " + inotifyWatches
                    + " watches (expected: at least 1 of each)");
        }
    }

    /**
     * The defaults: 8 GiB, 4096 tasks, 2 GiB per tmpfs, and half of the host user's inotify budget
     * ({@code fs.inotify.max_user_instances}, {@code max_user_watches}), so the host's editors and watchers keep
     * the other half.
     */
    public static ResourceLimits defaults() {
        return new ResourceLimits(DEFAULT_MEMORY, DEFAULT_PIDS, DEFAULT_TMPFS,
                half("/proc/sys/fs/inotify/max_user_instances", 128),
                half("/proc/sys/fs/inotify/max_user_watches", 8192));
    }

    public ResourceLimits withMemory(long bytes) {
        return new ResourceLimits(bytes, pids, tmpfsBytes, inotifyInstances, inotifyWatches);
    }

    public ResourceLimits withPids(int n) {
        return new ResourceLimits(memoryBytes, n, tmpfsBytes, inotifyInstances, inotifyWatches);
    }

    public ResourceLimits withTmpfs(long bytes) {
        return new ResourceLimits(memoryBytes, pids, bytes, inotifyInstances, inotifyWatches);
    }

    public ResourceLimits withInotify(int instances, int watches) {
        return new ResourceLimits(memoryBytes, pids, tmpfsBytes, instances, watches);
    }

    /**
     * Parses {@code 512m}, {@code 8g}, {@code 8GiB}, {@code 1048576} (binary units, case-insensitive).
     *
     * @throws IllegalArgumentException with {@code field} and what was expected
     */
    public static long parseSize(String field, String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(field + ": '" + text + "' (expected: a size like 512m, 8g or a number "
                    + "of bytes)");
        }
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        long value = Long.parseLong(m.group(1));
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException(field + ": '" + text + "' is too large (expected: at most 8 EiB)");
        }
        return value << shift;
    }

    /** {@code 8 GiB}, {@code 512 MiB}, {@code 1536 KiB}. */
    public static String format(long bytes) {
        if (bytes % GIB == 0) {
            return bytes / GIB + " GiB";
        }
        if (bytes % MIB == 0) {
            return bytes / MIB + " MiB";
        }
        return bytes % 1024 == 0 ? bytes / 1024 + " KiB" : bytes + " bytes";
    }

    private static int half(String sysctl, int fallback) {
        try {
            long value = Long.parseLong(readSysctl(Path.of(sysctl)).trim());
            return (int) Math.max(1, Math.min(Integer.MAX_VALUE, value / 2));
        } catch (IOException | NumberFormatException e) {
            return fallback / 2;
        }
    }

    /**
     * A sysctl's value, in one read: Linux answers a read of a number sysctl at any offset but 0 with the end of
     * the file, so reading it a byte at a time (what {@code Files.readString} does with a file whose size is 0)
     * gets its first digit only.
     */
    static String readSysctl(Path sysctl) throws IOException {
        try (InputStream in = Files.newInputStream(sysctl)) {
            return new String(in.readNBytes(SYSCTL_MAX), StandardCharsets.US_ASCII);
        }
    }

    @Override
    public String toString() {
        return "memory " + format(memoryBytes) + ", " + pids + " tasks, tmpfs " + format(tmpfsBytes) + " each, inotify "
                + inotifyInstances + " instances / " + inotifyWatches + " watches";
    }
}
