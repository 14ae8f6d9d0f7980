package dev.sallyport.benchmarks.peers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time and memory of a process and all its descendants, read from /proc: what a proxy costs, including
 * helpers it forked (Squid's certificate generators, for instance).
 */
final class ProcessTree {

    /** USER_HZ: the unit of utime/stime in /proc/PID/stat on Linux. */
    private static final double TICKS_PER_SECOND = 100.0;

    private final long root;

    ProcessTree(long root) {
        this.root = root;
    }

    /** utime + stime + cutime + cstime of every process in the tree, in seconds. */
    double cpuSeconds() {
        long ticks = 0;
        for (long[] stat : tree()) {
            ticks += stat[2] + stat[3] + stat[4] + stat[5];
        }
        return ticks / TICKS_PER_SECOND;
    }

    /**
     * CPU time of the JVM's JIT compiler threads ({@code C1 CompilerThread*}, {@code C2 CompilerThread*}) in the
     * tree, in seconds: part of {@link #cpuSeconds()}, reported beside it because compiling is a one-time cost of
     * a JVM's first minutes, not a per-request one. Zero for a process without such threads.
     */
    double jitSeconds() {
        long ticks = 0;
        for (long[] stat : tree()) {
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(stat[0]), "task"))) {
                for (Path task : (Iterable<Path>) tasks::iterator) {
                    String name = Files.readString(task.resolve("comm")).strip();
                    if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                        long[] t = stat(task);
                        ticks += t == null ? 0 : t[2] + t[3];
                    }
                }
            } catch (IOException | RuntimeException gone) {
                // the process or thread ended between listing and reading
            }
        }
        return ticks / TICKS_PER_SECOND;
    }

    /** Sum of VmHWM (peak resident set) over the tree, in MiB. */
    double peakRssMiB() {
        return sumStatus("VmHWM:");
    }

    /** Sum of VmRSS (current resident set) over the tree, in MiB. */
    double rssMiB() {
        return sumStatus("VmRSS:");
    }

    private double sumStatus(String field) {
        long kib = 0;
        for (long[] stat : tree()) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc", Long.toString(stat[0]), "status"))) {
                    if (line.startsWith(field)) {
                        kib += Long.parseLong(line.substring(field.length()).replace("kB", "").trim());
                    }
                }
            } catch (IOException | RuntimeException gone) {
                // the process ended between listing and reading: it no longer holds memory
            }
        }
        return kib / 1024.0;
    }

    /** Rows of {pid, ppid, utime, stime, cutime, cstime} for the root and its descendants. */
    private List<long[]> tree() {
        Map<Long, long[]> all = new HashMap<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            entries.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                long[] stat = stat(p);
                if (stat != null) {
                    all.put(stat[0], stat);
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException("/proc: cannot list processes (expected: Linux procfs)", e);
        }
        List<long[]> out = new ArrayList<>();
        if (!all.containsKey(root)) {
            return out;
        }
        List<Long> frontier = new ArrayList<>(List.of(root));
        while (!frontier.isEmpty()) {
            long pid = frontier.removeLast();
            out.add(all.get(pid));
            for (long[] stat : all.values()) {
                if (stat[1] == pid) {
                    frontier.add(stat[0]);
                }
            }
        }
        return out;
    }

    private static long[] stat(Path dir) {
        try {
            String text = Files.readString(dir.resolve("stat"));
            String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
            long pid = Long.parseLong(dir.getFileName().toString());
            return new long[] {pid, Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]),
                Long.parseLong(f[13]), Long.parseLong(f[14])};
        } catch (IOException | RuntimeException gone) {
            return null;
        }
    }
}
