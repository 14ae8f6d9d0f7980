package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What the last run's probes of this host found ({@link Launcher#userNamespaceLayer}, {@link Launcher#families}: a
 * user namespace through {@code unshare}, the capture rules in its network namespace), kept in the runner's start-up
 * cache folder so that the next run starts no probe processes (about 0.05 s of a quiet start, more on a busy host).
 *
 * <p>Only what works is kept, and only under a key of everything the answer depends on: the kernel's boot id, the
 * sysctls that allow or restrict user namespaces, this process's uid, the probes' command lines (the prefix that
 * drops a root runner's uid, the scripts, the rules) and the identity (path, device, inode, size and times) of every
 * program they run. Anything else (no record, another key, a damaged file, a probe that failed) means probing again,
 * and a failed probe is never kept. A record that outlived a change its key does not see can only claim that
 * something works: the launcher then fails the run with its own message ("cannot set up transparent capture"); no
 * run ever gets less isolation or a weaker warning from it.
 */
public final class ProbeRecord {
    static final String FILE = "probes.cache";
    private static final byte[] MAGIC = "SPPROBE1".getBytes(StandardCharsets.US_ASCII);
    private static final int DIGEST = 32;
    private static final int HEAD = MAGIC.length + DIGEST;
    /** The head and the longest name of a {@link Launcher.Probe}. */
    private static final int MAX_SIZE = HEAD + 16;
    /** The sysctls that decide whether an unprivileged process may make a user namespace (those this kernel has). */
    private static final List<Path> SYSCTLS = List.of(Path.of("/proc/sys/kernel/random/boot_id"),
            Path.of("/proc/sys/user/max_user_namespaces"), Path.of("/proc/sys/kernel/unprivileged_userns_clone"),
            Path.of("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            Path.of("/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined"));

    private ProbeRecord() {
    }

    /**
     * Makes {@link Launcher}'s answers for {@code prefix} known, from {@code cache}'s record when it holds one with
     * this key, else by probing (and keeping what works there); {@code tools}: the capture tools when the run
     * captures.
     */
    public static void probe(Optional<Path> cache, List<String> prefix, Optional<CaptureRules.Tools> tools) {
        byte[] key = key(prefix, tools);
        Optional<Launcher.Probe> known = cache.flatMap(c -> read(c, key));
        if (known.isPresent() && (tools.isEmpty() || known.get() != Launcher.Probe.NONE)) {
            Launcher.remember(prefix, known.get());
            return;
        }
        Launcher.userNamespaceLayer(prefix);
        tools.ifPresent(t -> Launcher.families(prefix, t));
        if (cache.isPresent() && Launcher.knownLayer(prefix)) {
            Launcher.Probe capture = tools.isPresent() ? Launcher.knownCapture(prefix)
                    : known.orElse(Launcher.Probe.NONE);
            write(cache.get(), key, capture);
        }
    }

    /** The record's key for these probes on this host now. */
    static byte[] key(List<String> prefix, Optional<CaptureRules.Tools> tools) {
        List<String> about = new ArrayList<>(List.of("sallyport probes 1", uid()));
        for (Path sysctl : SYSCTLS) {
            about.add(sysctl + "=" + content(sysctl));
        }
        List<List<String>> probes = new ArrayList<>(List.of(Launcher.layerProbe(prefix)));
        tools.ifPresent(t -> probes.add(Launcher.captureProbe(prefix, t)));
        for (List<String> argv : probes) {
            about.add(String.join("\0", argv));
            for (String arg : argv) {
                if (arg.startsWith("/")) {
                    about.add(StartupFiles.identity(Path.of(arg)));
                }
            }
        }
        for (String program : List.of("/bin/sh", "/usr/bin/cat", "/bin/cat")) {
            about.add(StartupFiles.identity(Path.of(program)));
        }
        return TrustFiles.sha256(String.join("\n", about).getBytes(StandardCharsets.UTF_8));
    }

    /** The capture answer of an intact record with {@code key} (NONE: the layer only); empty when there is none. */
    static Optional<Launcher.Probe> read(Path folder, byte[] key) {
        byte[] all = StartupFiles.read(folder, FILE, MAX_SIZE).orElse(new byte[0]);
        if (all.length <= HEAD || !Arrays.equals(all, 0, MAGIC.length, MAGIC, 0, MAGIC.length)
                || !Arrays.equals(all, MAGIC.length, HEAD, key, 0, DIGEST)) {
            return Optional.empty();
        }
        String name = new String(all, HEAD, all.length - HEAD, StandardCharsets.US_ASCII);
        return Arrays.stream(Launcher.Probe.values()).filter(p -> p.name().equals(name)).findFirst();
    }

    /** Keeps "the layer works, and capture found {@code capture}" under {@code key}; a failure only costs time. */
    static void write(Path folder, byte[] key, Launcher.Probe capture) {
        byte[] name = capture.name().getBytes(StandardCharsets.US_ASCII);
        StartupFiles.replace(folder, FILE, ByteBuffer.allocate(HEAD + name.length).put(MAGIC).put(key).put(name)
                .array());
    }

    private static String content(Path p) {
        try {
            return Files.readString(p).strip();
        } catch (IOException | RuntimeException e) {
            return "none";
        }
    }

    /** This process's real and effective uids, as the kernel says ({@code Uid:} of /proc/self/status). */
    private static String uid() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith("Uid:"))
                    .findFirst().orElse("Uid: unknown");
        } catch (IOException e) {
            return "Uid: unreadable";
        }
    }
}
