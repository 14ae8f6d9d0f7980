package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.ResourceLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the cgroup a run's limits live in, named {@code sallyport-PID-N}. cgroup v2 first: the nearest cgroup at
 * or above the runner's own whose {@code cgroup.subtree_control} enables {@code memory} and {@code pids} and that
 * the runner may write (as root, or in a subtree delegated to its user) gets the child. (v2 lets no cgroup that
 * holds processes hand controllers to children, so the runner's own cgroup qualifies only when it is the root.)
 * Then v1's {@code memory} and {@code pids} hierarchies (hybrid hosts): a child of the runner's own cgroup in each.
 * Otherwise {@link LimitEnforcement.Rlimits}.
 */
public final class Cgroups {
    static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    static final Path OWN = Path.of("/proc/self/cgroup");
    private static final Pattern OURS = Pattern.compile("sallyport-(\\d+)-\\d+");
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    /** One cgroup mount: {@code root} is the cgroup path shown at {@code mountPoint}. */
    record Mount(String fsType, String root, Path mountPoint, List<String> superOptions) {}

    private Cgroups() {
    }

    /** The limits' enforcement on this host; never fails (falls back to rlimits). */
    public static LimitEnforcement create(ResourceLimits limits) {
        List<Mount> mounts;
        List<String> own;
        try {
            mounts = mounts(Files.readAllLines(MOUNTINFO));
            own = Files.readAllLines(OWN);
        } catch (IOException e) {
            return new LimitEnforcement.Rlimits(limits, "no cgroup information: " + e.getMessage());
        }
        String name = "sallyport-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
        for (Mount m : mounts) {
            if (m.fsType().equals("cgroup2")) {
                Optional<LimitEnforcement> v2 = v2(m, ownPath(own, "").orElse(null), name, limits);
                if (v2.isPresent()) {
                    return v2.get();
                }
            }
        }
        Optional<Path> memory = v1Parent(mounts, own, "memory");
        Optional<Path> pids = v1Parent(mounts, own, "pids");
        if (memory.isPresent() && pids.isPresent()) {
            Optional<LimitEnforcement> v1 = v1(memory.get(), pids.get(), name, limits);
            if (v1.isPresent()) {
                return v1.get();
            }
        }
        return new LimitEnforcement.Rlimits(limits, "no cgroup with the memory and pids controllers that this user "
                + "may create");
    }

    private static Optional<LimitEnforcement> v2(Mount m, String ownPath, String name, ResourceLimits limits) {
        Optional<Path> own = folder(m, ownPath);
        for (Path dir = own.orElse(null); dir != null && dir.startsWith(m.mountPoint()); dir = dir.getParent()) {
            List<String> enabled = words(dir.resolve("cgroup.subtree_control"));
            if (!enabled.contains("memory") || !enabled.contains("pids") || !Files.isWritable(dir)
                    || !Files.isWritable(dir.resolve("cgroup.procs"))) {
                continue;
            }
            removeStale(dir);
            Path child = dir.resolve(name);
            try {
                Files.createDirectory(child);
                Files.writeString(child.resolve("memory.max"), Long.toString(limits.memoryBytes()));
                if (Files.exists(child.resolve("memory.swap.max"))) {
                    Files.writeString(child.resolve("memory.swap.max"), "0");
                }
                Files.writeString(child.resolve("pids.max"), Integer.toString(limits.pids()));
                return Optional.of(new LimitEnforcement.CgroupV2(child, limits));
            } catch (IOException e) {
                removeFolder(child);
            }
        }
        return Optional.empty();
    }

    private static Optional<LimitEnforcement> v1(Path memoryParent, Path pidsParent, String name,
                                                 ResourceLimits limits) {
        if (!Files.isWritable(memoryParent) || !Files.isWritable(pidsParent)) {
            return Optional.empty();
        }
        removeStale(memoryParent);
        removeStale(pidsParent);
        Path memory = memoryParent.resolve(name);
        Path pids = pidsParent.resolve(name);
        try {
            Files.createDirectory(memory);
            Files.createDirectory(pids);
            String bytes = Long.toString(limits.memoryBytes());
            Files.writeString(memory.resolve("memory.limit_in_bytes"), bytes);
            if (Files.exists(memory.resolve("memory.memsw.limit_in_bytes"))) {
                Files.writeString(memory.resolve("memory.memsw.limit_in_bytes"), bytes); // no swap on top
            }
            Files.writeString(pids.resolve("pids.max"), Integer.toString(limits.pids()));
            return Optional.of(new LimitEnforcement.CgroupV1(memory, pids, limits));
        } catch (IOException e) {
            removeFolder(memory);
            removeFolder(pids);
            return Optional.empty();
        }
    }

    /** The runner's own cgroup folder in the v1 hierarchy of {@code controller}. */
    private static Optional<Path> v1Parent(List<Mount> mounts, List<String> own, String controller) {
        for (Mount m : mounts) {
            if (m.fsType().equals("cgroup") && m.superOptions().contains(controller)) {
                Optional<Path> dir = folder(m, ownPath(own, controller).orElse(null));
                if (dir.isPresent()) {
                    return dir;
                }
            }
        }
        return Optional.empty();
    }

    /** The folder of cgroup {@code path} under mount {@code m}, if the mount shows it. */
    static Optional<Path> folder(Mount m, String path) {
        if (path == null || !(path + "/").startsWith(m.root().equals("/") ? "/" : m.root() + "/")) {
            return Optional.empty();
        }
        String below = path.substring(m.root().equals("/") ? 1 : m.root().length()).replaceFirst("^/", "");
        return Optional.of(below.isEmpty() ? m.mountPoint() : m.mountPoint().resolve(below));
    }

    /**
     * The runner's cgroup path from {@code /proc/self/cgroup}: for v2 ({@code controller} empty) the {@code 0::}
     * line, for v1 the line whose controller list holds {@code controller}.
     */
    static Optional<String> ownPath(List<String> lines, String controller) {
        for (String line : lines) {
            String[] parts = line.split(":", 3);
            if (parts.length != 3) {
                continue;
            }
            boolean match = controller.isEmpty() ? parts[0].equals("0") && parts[1].isEmpty()
                    : Arrays.asList(parts[1].split(",")).contains(controller);
            if (match) {
                return Optional.of(parts[2]);
            }
        }
        return Optional.empty();
    }

    /** The cgroup mounts in {@code /proc/self/mountinfo} lines. */
    static List<Mount> mounts(List<String> mountinfo) {
        List<Mount> mounts = new ArrayList<>();
        for (String line : mountinfo) {
            String[] fields = line.split(" ");
            int dash = Arrays.asList(fields).indexOf("-");
            if (dash < 6 || fields.length < dash + 4) {
                continue;
            }
            String type = fields[dash + 1];
            if (type.equals("cgroup") || type.equals("cgroup2")) {
                mounts.add(new Mount(type, unescape(fields[3]), Path.of(unescape(fields[4])),
                        List.of(fields[dash + 3].split(","))));
            }
        }
        return mounts;
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes ({@code \040}). */
    private static String unescape(String field) {
        Matcher m = Pattern.compile("\\\\([0-7]{3})").matcher(field);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(String.valueOf((char) Integer.parseInt(m.group(1), 8))));
        }
        return m.appendTail(out).toString();
    }

    private static List<String> words(Path file) {
        try {
            return List.of(Files.readString(file).trim().split("\\s+"));
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Removes {@code sallyport-PID-N} folders under {@code parent} whose runner is gone (a crashed run). */
    private static void removeStale(Path parent) {
        try (var children = Files.list(parent)) {
            for (Path child : children.toList()) {
                Matcher m = OURS.matcher(child.getFileName().toString());
                if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                    removeFolder(child);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
    }

    /**
     * Removes a cgroup folder; the kernel refuses ({@code EBUSY}) until the last task in it has been reaped, which
     * can trail the sandbox's exit by a moment, so it tries for up to a second.
     */
    static void removeFolder(Path dir) {
        for (int attempt = 0; attempt < 100 && Files.isDirectory(dir); attempt++) {
            try {
                Files.delete(dir);
                return;
            } catch (IOException busy) {
                try {
                    TimeUnit.MILLISECONDS.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
