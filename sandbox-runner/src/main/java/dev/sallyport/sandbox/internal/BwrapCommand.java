package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.BubblewrapProbe.Bubblewrap;
import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds bwrap's argument list: the namespaces and process flags, then the mounts in an order where later
 * mounts win (system folders read-only, {@code /etc} from {@link EtcMounts}, {@code /proc} with {@link ProcMasks},
 * private {@code /tmp}, hidden home, the package caches, grants, the scratch folders, the workspace, the folders
 * pinned inside it and the protected paths, the host sockets found in the workspace and the grants, the sandbox's own
 * read-only files), then the seccomp fd and the {@link Inside} JVM.
 */
public final class BwrapCommand {
    /** Where the runtime folder (socket, launch file, trust files) appears inside. */
    public static final String RUN_DIR = "/run/sallyport";
    /** Where this module's classes appear inside. */
    public static final String CLASSES_DIR = "/run/sallyport-classes";
    /** An empty file in the runtime folder: what masks a file (a /proc entry, a host socket), read-only. */
    public static final String EMPTY_FILE = "empty-file";
    /** An empty folder in the runtime folder: what masks a folder (a /proc entry), read-only. */
    public static final String EMPTY_DIR = "empty";
    /** The runtime file with the git exclude lines for the masks (absent when there are none). */
    public static final String GIT_IGNORE = "git-ignore";
    /** The fd number bwrap reads the seccomp program from. */
    public static final int SECCOMP_FD = 3;
    static final List<String> SYSTEM_DIRS = List.of("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32");

    /** The uid and gid the command keeps inside when bwrap runs in the launcher's user namespace (as its root). */
    public record Ids(int uid, int gid) {}

    private final List<String> args = new ArrayList<>();
    private final Bubblewrap bwrap;
    private final Map<Path, Path> sources;

    private BwrapCommand(Bubblewrap bwrap, Map<Path, Path> sources) {
        this.bwrap = bwrap;
        this.sources = sources;
    }

    /**
     * Where things come from on the host.
     *
     * @param runtime     host folder mounted read-only at {@link #RUN_DIR} (holds {@code host.sock}, {@code launch},
     *                    trust files, {@code resolv.conf}, {@code hosts}, {@code passwd}, {@code group},
     *                    {@link #GIT_IGNORE}, {@link #EMPTY_FILE}, {@link #EMPTY_DIR})
     * @param classes     this module's classes (folder or jar) for the {@link Inside} JVM
     * @param javaHome    the JDK the {@link Inside} JVM runs on
     * @param keepIds     the uid and gid the command keeps when bwrap runs in the launcher's user namespace, else empty
     * @param hostSockets socket files of host services in the workspace or grants, each covered by an empty file
     * @param sources     folders shown from elsewhere ({@link RootDrop}'s idmapped mounts), by the folder they
     *                    stand for; a path inside one comes from the same place inside its source
     * @param caches      the workspace's package caches ({@link PackageCaches}): host folder by its place in the home
     * @param givenNetwork the launcher already made the sandbox's network namespace (with the capture rules,
     *                    {@link Launcher#withInotifyShareAndCapture}): bwrap keeps it instead of making an empty one
     * @param etc         the arguments that make the sandbox's {@code /etc}, {@link #etc(Path)}
     * @param scratch     the scratch folders, each an overlay or a copy ({@link ScratchMounts})
     */
    public record Layout(Path runtime, Path classes, Path javaHome, Optional<Ids> keepIds, List<Path> hostSockets,
                         Map<Path, Path> sources, Map<String, Path> caches, boolean givenNetwork, List<String> etc,
                         List<ScratchMounts.Mount> scratch) {
        public Layout {
            etc = List.copyOf(etc);
            scratch = List.copyOf(scratch);
            hostSockets = List.copyOf(hostSockets);
            sources = Map.copyOf(sources);
            caches = Map.copyOf(caches);
        }
    }

    /**
     * The arguments that make the sandbox's {@code /etc} from the host's ({@link EtcMounts}) with the masks and the
     * trust bundle from {@code runtime}: a walk of {@code /etc}, which a run does beside the rest of its set-up.
     */
    public static List<String> etc(Path runtime) throws SandboxException {
        try {
            return EtcMounts.args(EtcMounts.ETC, runtime.resolve(EMPTY_FILE), runtime.resolve(EMPTY_DIR),
                    runtime.resolve(TrustFiles.BUNDLE));
        } catch (java.io.IOException e) {
            throw new SandboxException("/etc: cannot list what to show of it: " + e.getMessage(), e);
        }
    }

    public static List<String> build(Bubblewrap bwrap, SandboxSpec spec, ProtectedPaths.Plan plan, Layout layout)
            throws SandboxException {
        Path runtime = layout.runtime();
        Path classes = layout.classes();
        Path javaHome = layout.javaHome();
        Optional<Ids> keepIds = layout.keepIds();
        BwrapCommand c = new BwrapCommand(bwrap, layout.sources());
        c.add(bwrap.path().toString());
        c.add("--unshare-user", "--unshare-pid");
        if (!layout.givenNetwork()) {
            c.add("--unshare-net");
        }
        c.add("--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sallyport-sandbox",
                "--die-with-parent", "--new-session", "--cap-drop", "ALL");
        keepIds.ifPresent(ids -> c.add("--uid", Integer.toString(ids.uid()), "--gid", Integer.toString(ids.gid())));
        if (bwrap.supportsDisableUserns()) {
            c.add("--disable-userns");
        }
        c.add("--clearenv", "--setenv", "PATH", SandboxEnvironment.DEFAULT_PATH);
        c.systemFolders();
        c.args.addAll(layout.etc());
        c.add("--ro-bind", runtime.resolve("resolv.conf").toString(), "/etc/resolv.conf");
        c.add("--ro-bind", runtime.resolve("hosts").toString(), "/etc/hosts");
        c.add("--ro-bind", runtime.resolve("passwd").toString(), "/etc/passwd");
        c.add("--ro-bind", runtime.resolve("group").toString(), "/etc/group");
        c.add("--proc", "/proc");
        c.args.addAll(ProcMasks.args(Path.of("/proc"), runtime.resolve(EMPTY_FILE), runtime.resolve(EMPTY_DIR)));
        // /dev is bwrap's own tmpfs: read-only (its device nodes stay usable); every writable tmpfs has a size
        c.add("--dev", "/dev", "--remount-ro", "/dev");
        long size = spec.limits().tmpfsBytes();
        c.tmpfs("/dev/shm", size);
        c.tmpfs("/tmp", size);
        c.tmpfs(spec.hostHome().toString(), size);
        c.add("--ro-bind", c.source(javaHome), javaHome.toString());
        for (Map.Entry<String, Path> cache : new java.util.TreeMap<>(layout.caches()).entrySet()) {
            c.add("--bind", c.source(cache.getValue()), spec.hostHome().resolve(cache.getKey()).toString());
        }
        for (Path p : spec.readOnly()) {
            existing("--allow-read", p);
            c.add("--ro-bind", c.source(p), p.toString());
        }
        for (Path p : spec.readWrite()) {
            existing("--allow-write", p);
            c.add("--bind", c.source(p), p.toString());
        }
        for (ScratchMounts.Mount m : layout.scratch()) {
            // the host folder under a tmpfs that goes with the sandbox, or the run's copy of it: nothing reaches the host
            switch (m) {
                case ScratchMounts.Overlay o -> c.add("--overlay-src", o.source().toString(), "--tmp-overlay",
                        o.target().toString());
                case ScratchMounts.Copied k -> c.add("--bind", k.copy().toString(), k.target().toString());
            }
        }
        c.add("--bind", c.source(spec.workdir()), spec.workdir().toString());
        for (Path pinned : plan.pinned) {
            c.add("--bind", c.source(pinned), pinned.toString());
        }
        for (ProtectedPaths.Entry e : plan.readOnly) {
            c.add("--ro-bind", c.source(e.path()), e.path().toString());
        }
        if (Files.exists(runtime.resolve(GIT_IGNORE))) {
            // git inside ignores the masks instead of offering to commit them (~/.config/git/ignore)
            c.add("--ro-bind", runtime.resolve(GIT_IGNORE).toString(),
                    spec.hostHome().resolve(".config/git/ignore").toString());
        }
        // Host services' sockets that lie in the workspace or a grant: an empty file over each (HostSockets).
        for (Path socket : layout.hostSockets()) {
            c.add("--ro-bind", runtime.resolve(EMPTY_FILE).toString(), socket.toString());
        }
        c.add("--ro-bind", runtime.toString(), RUN_DIR);
        String classPath = Files.isDirectory(classes) ? CLASSES_DIR : CLASSES_DIR + "/" + classes.getFileName();
        c.add("--ro-bind", classes.toString(), classPath);
        Optional<Path> cache = aotCacheOf(classes);
        cache.ifPresent(aot -> c.add("--ro-bind", aot.toString(), CLASSES_DIR + "/" + aot.getFileName()));
        c.add("--chdir", spec.workdir().toString(), "--seccomp", Integer.toString(SECCOMP_FD), "--");
        c.add(javaHome.resolve("bin/java").toString());
        c.args.addAll(Inside.JVM_OPTIONS);
        // The jar's ahead-of-time cache when there is a fresh one (one the JVM cannot use only costs time: it
        // starts without, quietly, since its output is the command's), else the JDK's own class data.
        c.args.addAll(cache.map(aot -> List.of("-XX:AOTCache=" + CLASSES_DIR + "/" + aot.getFileName(),
                "-Xlog:aot=off", "-Xlog:cds=off")).orElse(List.of("-Xshare:auto")));
        c.add("-cp", classPath, Inside.class.getName(), RUN_DIR + "/launch");
        return List.copyOf(c.args);
    }

    /**
     * The ahead-of-time cache {@link InsideTraining} made for the jar {@code classes}: {@code NAME.aot} beside
     * {@code NAME.jar}, when it exists and is not older than the jar (a stale one is left out); empty for a folder.
     */
    public static Optional<Path> aotCacheOf(Path classes) {
        String name = classes.getFileName() == null ? "" : classes.getFileName().toString();
        if (!name.endsWith(".jar") || !Files.isRegularFile(classes)) {
            return Optional.empty();
        }
        Path aot = classes.resolveSibling(name.substring(0, name.length() - ".jar".length()) + ".aot");
        try {
            boolean fresh = Files.isRegularFile(aot)
                    && Files.getLastModifiedTime(aot).compareTo(Files.getLastModifiedTime(classes)) >= 0;
            return fresh ? Optional.of(aot) : Optional.empty();
        } catch (java.io.IOException e) {
            return Optional.empty();
        }
    }

    private void systemFolders() {
        add("--ro-bind", "/usr", "/usr");
        for (String dir : SYSTEM_DIRS) {
            Path p = Path.of(dir);
            if (Files.isSymbolicLink(p)) {
                try {
                    add("--symlink", Files.readSymbolicLink(p).toString(), dir);
                } catch (java.io.IOException e) {
                    // unreadable link: leave the folder out
                }
            } else if (Files.isDirectory(p)) {
                add("--ro-bind", dir, dir);
            }
        }
        if (Files.isDirectory(Path.of("/opt"))) {
            add("--ro-bind", "/opt", "/opt");
        }
    }

    /** A tmpfs of {@code bytes} (bwrap 0.7+; older ones mount it at the kernel's default, half of the RAM). */
    private void tmpfs(String path, long bytes) {
        if (bwrap.supportsSize()) {
            add("--size", Long.toString(bytes));
        }
        add("--tmpfs", path);
    }

    /** Where bwrap reads {@code p} from: inside the source standing for one of its folders, else {@code p}. */
    private String source(Path p) {
        Map.Entry<Path, Path> best = null;
        for (Map.Entry<Path, Path> e : sources.entrySet()) {
            if (p.startsWith(e.getKey()) && (best == null || e.getKey().getNameCount() > best.getKey().getNameCount())) {
                best = e;
            }
        }
        return best == null ? p.toString() : best.getValue().resolve(best.getKey().relativize(p).toString()).toString();
    }

    private static String existing(String field, Path p) throws SandboxException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            throw new SandboxException(field + " " + p + ": does not exist (expected: an existing file or folder;"
                    + " create it first)");
        }
        return p.toString();
    }

    private void add(String... more) {
        args.addAll(List.of(more));
    }
}
