package dev.sallyport.sandbox;

import dev.sallyport.sandbox.internal.Background;
import dev.sallyport.sandbox.internal.BwrapCommand;
import dev.sallyport.sandbox.internal.Cgroups;
import dev.sallyport.sandbox.internal.GitIdentity;
import dev.sallyport.sandbox.internal.HostAccounts;
import dev.sallyport.sandbox.internal.HeldNames;
import dev.sallyport.sandbox.internal.HostLink;
import dev.sallyport.sandbox.internal.HomeTools;
import dev.sallyport.sandbox.internal.HostSockets;
import dev.sallyport.sandbox.internal.Inside;
import dev.sallyport.sandbox.internal.Launch;
import dev.sallyport.sandbox.internal.CaptureRules;
import dev.sallyport.sandbox.internal.Launcher;
import dev.sallyport.sandbox.internal.ProxyRelay;
import dev.sallyport.sandbox.internal.LimitEnforcement;
import dev.sallyport.sandbox.internal.PackageCaches;
import dev.sallyport.sandbox.internal.ProbeRecord;
import dev.sallyport.sandbox.internal.ProtectedPaths;
import dev.sallyport.sandbox.internal.RelayBudget;
import dev.sallyport.sandbox.internal.ResizeSignal;
import dev.sallyport.sandbox.internal.RootDrop;
import dev.sallyport.sandbox.internal.SandboxEnvironment;
import dev.sallyport.sandbox.internal.ScratchMounts;
import dev.sallyport.sandbox.internal.SeccompFilter;
import dev.sallyport.sandbox.internal.TrustFiles;
import dev.sallyport.sandbox.internal.WorkloadUser;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Runs a command in the process sandbox: bubblewrap namespaces (user, mount, pid, net, ipc, uts, cgroup), a
 * seccomp filter built in Java, Landlock applied inside, and an already-running proxy as the only way out.
 * Start with {@link #run(SandboxSpec)}; README.md explains what is isolated and how.
 */
public final class ProcessSandbox {
    /** The host's end of the sandbox, in the runtime folder, gone once the setup has handed its sockets over. */
    private static final String HOST_SOCKET = "host.sock";
    /** The system property naming the jar of the {@link Inside} JVM (see {@link #classes()}). */
    public static final String INSIDE_JAR_PROPERTY = "sallyport.inside.jar";

    private ProcessSandbox() {
    }

    /**
     * Runs with the caller's stdio, passes the terminal's window-size changes on to the command (SIGWINCH,
     * {@link ResizeSignal}), stops the sandbox on JVM shutdown (SIGINT/SIGTERM), prints what the checks after the run
     * found ({@link RunningSandbox#notices()}) on stderr, and returns the exit status.
     */
    public static int run(SandboxSpec spec) throws SandboxException, InterruptedException {
        return run(spec, System.err);
    }

    /** {@link #run(SandboxSpec)} printing the notices ({@code sallyport: ...}) on {@code notices}. */
    public static int run(SandboxSpec spec, PrintStream notices) throws SandboxException, InterruptedException {
        RunningSandbox sandbox = start(spec, Stdio.inherit());
        printNotices(sandbox, notices);
        Thread hook = new Thread(() -> {
            sandbox.close();
            printNotices(sandbox, notices);
        }, "sallyport-sandbox-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try (ResizeSignal _ = ResizeSignal.forward(sandbox::windowChanged)) {
            int status = sandbox.waitFor();
            StartTrace.mark("command ended");
            printNotices(sandbox, notices);
            return status;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already
            }
        }
    }

    /** Starts the sandbox and returns at once; the caller waits on and closes the result. */
    public static RunningSandbox start(SandboxSpec spec, Stdio stdio) throws SandboxException {
        return start(spec, stdio, Integer.MAX_VALUE);
    }

    /**
     * {@link #start(SandboxSpec, Stdio)} using at most Landlock ABI {@code landlockAbiCap}: tests attack the
     * sandbox as an older kernel would build it.
     */
    static RunningSandbox start(SandboxSpec requested, Stdio stdio, int landlockAbiCap) throws SandboxException {
        return start(requested, stdio, landlockAbiCap, ScratchMounts.Choice.OVERLAY_WHERE_IT_WORKS);
    }

    /** {@link #start(SandboxSpec, Stdio, int)} showing the scratch folders as {@code scratchChoice} says. */
    static RunningSandbox start(SandboxSpec requested, Stdio stdio, int landlockAbiCap,
                                ScratchMounts.Choice scratchChoice) throws SandboxException {
        BubblewrapProbe.Bubblewrap bwrap = BubblewrapProbe.require();
        StartTrace.mark("bwrap found");
        checkWorkdir(requested);
        Map<Path, Path> scratch = ScratchFolders.forRun(requested);
        List<Path> visible = new ArrayList<>(List.of(requested.workdir()));
        visible.addAll(requested.readOnly());
        visible.addAll(requested.readWrite());
        visible.addAll(scratch.keySet());
        HomeTools.Plan tools = HomeTools.plan(requested.hostEnv(), requested.command().getFirst(),
                requested.hostHome(), visible);
        SandboxSpec spec = withReadOnly(requested, tools.shown());
        StartTrace.mark("home tools planned");
        Optional<String> gitNotice = gitNotice(spec);   // before the masks: an empty .git mask is made below
        ProtectedPaths.Plan plan = ProtectedPaths.prepare(spec.workdir(), spec.gitWritable(),
                HeldNames.with(spec.hold()), Held.of(spec.heldStore(), spec.workdir()));
        StartTrace.mark("protected paths prepared");
        List<Path> grants = new ArrayList<>(spec.readOnly());
        grants.addAll(spec.readWrite());
        grants.addAll(scratch.values());
        List<Path> writable = new ArrayList<>(spec.readWrite());
        writable.add(spec.workdir());
        spec.packageCaches().ifPresent(writable::add);
        // a cache the command could write would let it hide host sockets from the next run: not used then
        Optional<Path> startupCache = spec.startupCache().filter(c -> WritableFolders.holding(c, writable).isEmpty());
        CompletableFuture<List<Path>> grantSockets = HostSockets.findInBackground(grants, startupCache);
        Path root = null;
        HostLink link = null;
        LimitEnforcement limits = null;
        RootDrop drop = null;
        CompletableFuture<Void> trust = null;
        CompletableFuture<HostLink> listening = null;
        boolean started = false;
        try {
            WorkloadUser user = WorkloadUser.choose(spec.workdir(), spec.hostEnv());
            // what waits on other processes (the probes, git) or takes a while runs beside the rest of the set-up
            List<String> prefix = RootDrop.prefixFor(user);
            CompletableFuture<Optional<CaptureRules.Tools>> probed = Background.start("sallyport-probes",
                    () -> probe(spec, prefix, startupCache));
            CompletableFuture<Optional<String>> identity = Background.start("sallyport-git-identity",
                    () -> GitIdentity.read(spec.hostHome(), user));
            CompletableFuture<byte[]> filter = Background.start("sallyport-seccomp", SeccompFilter::forCurrentArch);
            root = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "sallyport-sandbox-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path mounted = Files.createDirectory(root.resolve("run"));
            CompletableFuture<List<String>> etc = Background.start("sallyport-etc", () -> BwrapCommand.etc(mounted));
            // its first use binds the native calls of the unix sockets (java.lang.foreign), a few tens of ms
            listening = Background.start("sallyport-host-link", () -> HostLink.listen(mounted.resolve(HOST_SOCKET)));
            Files.createDirectory(mounted.resolve(BwrapCommand.EMPTY_DIR));
            Files.createFile(mounted.resolve(BwrapCommand.EMPTY_FILE));
            List<String> excludes = plan.gitExcludes();
            if (!excludes.isEmpty()) {
                Files.write(mounted.resolve(BwrapCommand.GIT_IGNORE), excludes);
            }
            trust = Background.start("sallyport-trust-files", () -> {
                TrustFiles.write(mounted, spec.caPem(), startupCache);
                return null;
            });
            Files.writeString(mounted.resolve("hosts"), "127.0.0.1 localhost\n::1 localhost\n");
            // copies into the runtime folder before a root drop hands it to the command's uid
            List<ScratchMounts.Mount> scratchMounts = ScratchMounts.prepare(bwrap, prefix, user, scratchChoice,
                    scratch, root, spec.limits().tmpfsBytes());
            StartTrace.mark("scratch folders prepared");
            HostAccounts.write(mounted, user, spec.hostHome());
            String run = BwrapCommand.RUN_DIR;
            List<String> seeds = new ArrayList<>();
            Optional<String> gitIdentity = Background.join(identity);
            StartTrace.mark("git identity read");
            Files.writeString(mounted.resolve(GitIdentity.FILE), gitIdentity.orElse(GitIdentity.DEFAULT));
            seeds.addAll(List.of(run + "/" + GitIdentity.FILE, spec.hostHome().resolve(".gitconfig").toString()));
            Map<String, Path> caches = spec.packageCaches().isPresent()
                    ? PackageCaches.create(spec.packageCaches().get()) : Map.of();
            List<String> notices = new ArrayList<>(user.notice().stream().toList());
            notices.addAll(tools.notices());
            gitNotice.ifPresent(notices::add);
            if (gitIdentity.isEmpty() && Files.exists(spec.workdir().resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
                notices.add("git: no user.name and user.email on the host; commits made inside are by '"
                        + GitIdentity.DEFAULT_NAME + " <" + GitIdentity.DEFAULT_EMAIL + ">' unless the repository "
                        + "names someone (git config --global user.name/user.email on the host gives yours)");
            }
            limits = Cgroups.create(spec.limits());
            StartTrace.mark("cgroup made");
            Optional<CaptureRules.Tools> capture = captureTools(spec, prefix, Background.join(probed), notices);
            StartTrace.mark("capture probed");
            Files.writeString(mounted.resolve("resolv.conf"), capture.isPresent() ? CaptureRules.resolvConf()
                    : "# sallyport sandbox: no DNS here; names are resolved by the proxy at 127.0.0.1:"
                            + spec.insidePort() + "\n");
            Map<String, String> env = SandboxEnvironment.forProcess(spec, tools.path(), run + "/" + TrustFiles.BUNDLE,
                    run + "/" + TrustFiles.P12);
            Optional<ResourceLimits> rlimits = limits.rlimits();
            Launch launch = new Launch(spec.command(), env, spec.workdir().toString(), spec.insidePort(),
                    run + "/" + HOST_SOCKET, spec.requireLandlock(), List.of("/"), writable(spec, caches.keySet()),
                    List.of("/dev"), rlimits.map(ResourceLimits::memoryBytes).orElse(0L),
                    rlimits.map(r -> (long) r.pids()).orElse(0L), HostLink.canSupervise(), landlockAbiCap, notices,
                    seeds, capture.isPresent());
            Files.write(mounted.resolve("launch"), launch.encode());
            link = Background.join(listening);
            Path seccomp = Files.write(root.resolve("seccomp.bpf"), Background.join(filter));
            StartTrace.mark("seccomp written");
            Background.join(trust);   // before the root drop hands the folder to the command's uid
            StartTrace.mark("trust files written");
            Path javaHome = Path.of(System.getProperty("java.home"));
            drop = user instanceof WorkloadUser.Dropped dropped
                    ? RootDrop.prepare(spec, dropped, root, classes(), javaHome) : RootDrop.none(classes());
            StartTrace.mark("root drop prepared");
            List<String> warnings = new ArrayList<>();
            List<Path> hostSockets = ScratchFolders.shownAt(HostSockets.cover(plan, grantSockets), scratch);
            StartTrace.mark("host sockets found");
            List<String> argv = launcher(bwrap, spec, plan, new BwrapCommand.Layout(mounted, drop.classes(), javaHome,
                    Optional.empty(), hostSockets, drop.sources(), caches, capture.isPresent(), Background.join(etc),
                    scratchMounts),
                    seccomp, limits, user, drop, capture, warnings);
            StartTrace.mark("argv built");
            ProcessBuilder pb = new ProcessBuilder(argv).redirectInput(stdio.in()).redirectOutput(stdio.out())
                    .redirectError(stdio.err());
            pb.environment().clear();
            pb.environment().put("PATH", SandboxEnvironment.DEFAULT_PATH);
            Process process = pb.start();
            StartTrace.mark("launcher started");
            ProxyRelay.Targets targets = capture.isPresent() ? new ProxyRelay.Targets(spec.proxy(),
                    spec.capture().get().dns(), spec.capture().get().transparent())
                    .withLiterals(spec.capture().get().literals())
                    .withFamilies(Launcher.families(drop.prefix(), capture.get())) : new ProxyRelay.Targets(spec.proxy());
            targets = targets.withToken(spec.identityToken().orElse(null));
            // the relay's threads are the runner's, outside the sandbox's task limit: its connections get half of it
            // (the logger is made when it warns, as in all the sandbox's classes: SLF4J's start costs a run's start
            // some tens of milliseconds, and most runs log nothing)
            RelayBudget budget = RelayBudget.forTasks(spec.limits().pids(), limit -> org.slf4j.LoggerFactory
                    .getLogger(ProcessSandbox.class).warn("sandbox relay: the sandbox holds {} connections at once, "
                            + "its most (half its task limit, at most {}); more are closed until some end", limit,
                            RelayBudget.MOST));
            link.start(process.toHandle(), targets, new HostLink.Rules(spec.insidePort(),
                    user.uid(), user.gid(), budget), drop::detachFromHost);
            RunningSandbox sandbox = new RunningSandbox(process, link, root, plan, limits, drop, warnings);
            started = true;
            return sandbox;
        } catch (IOException | RuntimeException e) {
            throw new SandboxException("sandbox: cannot start: " + e.getMessage(), e);
        } finally {
            if (!started) {
                Background.settle(trust);   // it writes into the folder removed below
                Background.settle(listening);
                if (link == null && listening != null && listening.state() == java.util.concurrent.Future.State.SUCCESS) {
                    link = listening.resultNow();
                }
                if (link != null) {
                    link.close();
                }
                if (limits != null) {
                    limits.remove();
                }
                if (drop != null) {
                    drop.close();
                }
                if (root != null) {
                    RunningSandbox.deleteTree(root);
                }
                ProtectedPaths.removeMasks(plan);
            }
        }
    }

    /**
     * The whole argv: the launcher shell (cgroup, seccomp fd), for a root runner {@code setpriv} to the command's
     * uid ({@link RootDrop}), the user namespace with the inotify share where the host allows it, and bwrap over
     * {@code layout} (its ids set here). What the host lacks is added to {@code warnings}.
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    private static List<String> launcher(BubblewrapProbe.Bubblewrap bwrap, SandboxSpec spec, ProtectedPaths.Plan plan,
                                         BwrapCommand.Layout layout, Path seccomp, LimitEnforcement limits,
                                         WorkloadUser user, RootDrop drop, Optional<CaptureRules.Tools> capture,
                                         List<String> warnings)
            throws SandboxException {
        boolean layer = Launcher.userNamespaceLayer(drop.prefix());
        Optional<BwrapCommand.Ids> ids = layer ? Optional.of(new BwrapCommand.Ids(user.uid(), user.gid()))
                : Optional.empty();
        List<String> command = BwrapCommand.build(bwrap, spec, plan, new BwrapCommand.Layout(layout.runtime(),
                layout.classes(), layout.javaHome(), ids, layout.hostSockets(), layout.sources(), layout.caches(),
                layout.givenNetwork(), layout.etc(), layout.scratch()));
        if (capture.isPresent()) {
            CaptureRules.Families families = Launcher.families(drop.prefix(), capture.get());
            command = Launcher.withInotifyShareAndCapture(spec.limits().inotifyInstances(),
                    spec.limits().inotifyWatches(), capture.get(), spec.capture().orElseThrow().literals(), families,
                    CaptureRules.rules(spec.insidePort(), spec.capture().orElseThrow().literals(), families), command);
        } else if (layer) {
            command = Launcher.withInotifyShare(spec.limits().inotifyInstances(), spec.limits().inotifyWatches(), command);
        } else {
            warnings.add("warning: inotify is not limited here (expected: unshare(1) and user namespaces in which "
                    + "the runner keeps its capabilities); the sandbox can use the host user's whole inotify budget");
        }
        if (!bwrap.supportsSize()) {
            warnings.add("warning: bwrap " + bwrap.version() + " cannot size a tmpfs (expected: bubblewrap 0.7 or "
                    + "newer); /tmp, /dev/shm and HOME may each grow to half of the RAM");
        }
        List<String> dropped = new ArrayList<>(drop.prefix());
        dropped.addAll(command);
        return Launcher.argv(seccomp, limits.procsFiles(), dropped);
    }

    /**
     * The tools of transparent capture when the spec asks for it and this host can do it (ip and nft installed, and
     * the user namespace layer, in which the launcher makes the sandbox's network namespace); else empty, with a
     * notice saying why when it was asked for.
     */
    private static Optional<CaptureRules.Tools> captureTools(SandboxSpec spec, List<String> prefix,
                                                             Optional<CaptureRules.Tools> tools, List<String> notices) {
        if (spec.capture().isEmpty()) {
            return Optional.empty();
        }
        if (tools.isEmpty() || !Launcher.captureLayer(prefix, tools.get())) {
            notices.add("warning: transparent capture is off (expected: ip and nft installed, user namespaces in "
                    + "which the runner keeps its capabilities, and nf_tables with NAT in the kernel); only clients "
                    + "that use the proxy variables get out");
            return Optional.empty();
        }
        CaptureRules.ipv4OnlyNotice(Launcher.families(prefix, tools.get())).ifPresent(notices::add);
        return tools;
    }

    /**
     * What {@link #launcher} and {@link #captureTools} ask {@link Launcher} about this host, asked ahead (the answers
     * are kept per prefix for the JVM, and what works in the start-up cache, {@link ProbeRecord}): whether the user
     * namespace layer works through {@code prefix} and, when the run captures, whether the capture rules load there
     * and for which families. The tools of capture when the run captures and the host has them.
     */
    private static Optional<CaptureRules.Tools> probe(SandboxSpec spec, List<String> prefix,
                                                      Optional<Path> startupCache) {
        Optional<CaptureRules.Tools> tools = spec.capture().isEmpty() ? Optional.empty() : CaptureRules.tools();
        ProbeRecord.probe(startupCache, prefix, tools);
        return tools;
    }

    private static void printNotices(RunningSandbox sandbox, PrintStream notices) {
        for (String line : sandbox.takeNotices()) {
            notices.println("sallyport: " + line);
        }
        notices.flush();
    }

    private static List<String> writable(SandboxSpec spec, java.util.Set<String> caches) {
        List<String> paths = new ArrayList<>(List.of(spec.workdir().toString(), "/tmp", "/dev/shm",
                spec.hostHome().toString()));
        spec.readWrite().forEach(p -> paths.add(p.toString()));
        spec.scratch().forEach(p -> paths.add(p.toString()));
        caches.forEach(location -> paths.add(spec.hostHome().resolve(location).toString()));
        return paths;
    }

    /** The one line a run without {@code gitWritable} says when the workspace is a git checkout. */
    private static Optional<String> gitNotice(SandboxSpec spec) {
        Path git = spec.workdir().resolve(".git");
        if (spec.gitWritable() || !Files.exists(git, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        return Optional.of(git + " is read-only inside, as asked (--git-read-only or the policy's sandbox.git: "
                + "read-only): git commit, fetch, pull and checkout fail with 'Read-only file system'");
    }

    /** {@code spec} with {@code more} shown read-only too. */
    private static SandboxSpec withReadOnly(SandboxSpec spec, List<Path> more) {
        if (more.isEmpty()) {
            return spec;
        }
        List<Path> readOnly = new ArrayList<>(spec.readOnly());
        readOnly.addAll(more);
        return new SandboxSpec(spec.command(), spec.workdir(), spec.proxy(), spec.caPem(), spec.passEnv(),
                spec.placeholders(), readOnly, spec.readWrite(), spec.scratch(), spec.requireLandlock(),
                spec.gitWritable(), spec.hostHome(), spec.hostEnv(), spec.insidePort(), spec.limits(),
                spec.packageCaches(), spec.capture(), spec.identityToken(), spec.startupCache(), spec.hold(),
                spec.heldStore());
    }

    private static void checkWorkdir(SandboxSpec spec) throws SandboxException {
        Path ws = spec.workdir();
        if (!Files.isDirectory(ws)) {
            throw new SandboxException("workdir: " + ws + " is not a folder (expected: an existing folder)");
        }
        if (spec.hostHome().startsWith(ws)) {
            throw new SandboxException("workdir: " + ws + " contains the home folder " + spec.hostHome()
                    + " (expected: a project folder, not the home folder or one of its parents)");
        }
        if (spec.hostHome().getNameCount() == 0) {
            throw new SandboxException("hostHome: / (expected: a home folder other than the root)");
        }
    }

    /**
     * This module's classes for the {@link Inside} JVM: the jar named by the system property
     * {@value #INSIDE_JAR_PROPERTY} ({@code bin/sallyport} names the build's
     * {@code sallyport-sandbox-runner-*-inside.jar}, which has an ahead-of-time cache beside it) when that file
     * exists, else the jar or the classes folder that holds {@link Inside}.
     */
    static Path classes() throws IOException {
        String named = System.getProperty(INSIDE_JAR_PROPERTY, "");
        if (!named.isEmpty() && Files.isRegularFile(Path.of(named))) {
            return Path.of(named).toAbsolutePath();
        }
        try {
            return Path.of(Inside.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | NullPointerException e) {
            throw new IOException("cannot locate the sandbox classes (expected: loaded from a jar or folder)", e);
        }
    }
}
