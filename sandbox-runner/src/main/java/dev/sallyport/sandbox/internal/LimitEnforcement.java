package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.ResourceLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How the sandbox's memory and task limits are enforced on this host, chosen by {@link Cgroups#create}: a cgroup
 * the launcher joins before bwrap starts (v2, or v1's memory and pids hierarchies), or, where the runner can
 * create none, rlimits the setup JVM inside sets on itself before it starts the command (inherited by every
 * process after it). A cgroup reports after the run which limit was hit; rlimits cannot.
 */
public sealed interface LimitEnforcement {
    /** The {@code cgroup.procs} files the launcher writes its pid into before it execs bwrap. */
    List<Path> procsFiles();

    /** The rlimits the setup JVM applies inside (none with a cgroup). */
    Optional<ResourceLimits> rlimits();

    /** After the run: one line for each limit that was hit. */
    List<String> report();

    /** Removes the cgroup once every process in it has exited. */
    void remove();

    /** One line for the user: what enforces the limits here. */
    String describe();

    /** A cgroup: the kernel enforces the limits for the whole sandbox and counts what it refused. */
    sealed interface Cgroup extends LimitEnforcement {
        @Override
        default Optional<ResourceLimits> rlimits() {
            return Optional.empty();
        }
    }

    /** A cgroup v2 folder with {@code memory.max}, {@code memory.swap.max} 0 and {@code pids.max}. */
    record CgroupV2(Path dir, ResourceLimits limits) implements Cgroup {
        @Override
        public List<Path> procsFiles() {
            return List.of(dir.resolve("cgroup.procs"));
        }

        @Override
        public List<String> report() {
            return lines(limits, counter(dir.resolve("memory.events"), "oom_kill"),
                    "memory.events oom_kill", counter(dir.resolve("pids.events"), "max"), "pids.events max");
        }

        @Override
        public void remove() {
            Cgroups.removeFolder(dir);
        }

        @Override
        public String describe() {
            return "cgroup v2 " + dir;
        }
    }

    /** cgroup v1 folders in the memory and pids hierarchies ({@code memory.limit_in_bytes}, {@code pids.max}). */
    record CgroupV1(Path memory, Path pids, ResourceLimits limits) implements Cgroup {
        @Override
        public List<Path> procsFiles() {
            return List.of(memory.resolve("cgroup.procs"), pids.resolve("cgroup.procs"));
        }

        @Override
        public List<String> report() {
            return lines(limits, counter(memory.resolve("memory.oom_control"), "oom_kill"),
                    "memory.oom_control oom_kill", counter(pids.resolve("pids.events"), "max"), "pids.events max");
        }

        @Override
        public void remove() {
            Cgroups.removeFolder(memory);
            Cgroups.removeFolder(pids);
        }

        @Override
        public String describe() {
            return "cgroup v1 " + memory + " and " + pids;
        }
    }

    /**
     * No cgroup: {@code RLIMIT_DATA} bounds each process's memory (not their sum, and not tmpfs contents), and
     * {@code RLIMIT_NPROC}, counted in the sandbox's own user namespace (Linux 5.14+), bounds its tasks (not for a
     * runner that is host root: the kernel does not apply it to uid 0).
     */
    record Rlimits(ResourceLimits limits, String why) implements LimitEnforcement {
        @Override
        public List<Path> procsFiles() {
            return List.of();
        }

        @Override
        public Optional<ResourceLimits> rlimits() {
            return Optional.of(limits);
        }

        @Override
        public List<String> report() {
            return List.of();
        }

        @Override
        public void remove() {
            // nothing to remove
        }

        @Override
        public String describe() {
            return "rlimits per process (" + why + ")";
        }
    }

    /** The value of {@code key} in a flat keyed file ({@code "oom_kill 3"}), 0 when absent or unreadable. */
    private static long counter(Path file, String key) {
        try {
            for (String line : Files.readAllLines(file)) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length == 2 && parts[0].equals(key)) {
                    return Long.parseLong(parts[1]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone or not this kernel's format: nothing to report
        }
        return 0;
    }

    /** Lines for {@link #report()}: the memory and pids counters that are not zero. */
    static List<String> lines(ResourceLimits limits, long oomKills, String oomSource, long pidsRefused,
                              String pidsSource) {
        List<String> out = new ArrayList<>();
        if (oomKills > 0) {
            out.add("the sandbox ran out of memory: the kernel killed " + oomKills + (oomKills == 1 ? " process" :
                    " processes") + " at its memory limit of " + ResourceLimits.format(limits.memoryBytes())
                    + " (--memory; " + oomSource + " " + oomKills + ")");
        }
        if (pidsRefused > 0) {
            out.add("the sandbox reached its limit of " + limits.pids() + " tasks: " + pidsRefused + " new "
                    + (pidsRefused == 1 ? "process or thread was" : "processes or threads were") + " refused (--pids; "
                    + pidsSource + " " + pidsRefused + ")");
        }
        return List.copyOf(out);
    }
}
