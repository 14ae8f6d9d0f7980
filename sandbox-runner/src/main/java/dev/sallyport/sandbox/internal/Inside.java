package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The entry point bwrap runs inside the sandbox, and the only code of ours that ever runs there: a short-lived
 * setup that leaves nothing behind. It opens the sandbox's listening socket ({@code 127.0.0.1:PORT} of the
 * sandbox's own network namespace) and, with transparent capture, its UDP socket on the same port (where DNS over UDP
 * is redirected), and hands them to the host over the bind-mounted unix socket (the host accepts and reads on them
 * and relays to the proxy), then, on one fresh thread: installs the command's seccomp program (with a
 * notification listener for the host's {@link ConnectSupervisor} when asked to), waits for the host's go-ahead,
 * applies Landlock to that thread and replaces the whole process with the command ({@link Exec}). No JVM stays
 * in the sandbox for the command to attach to, signal or read; the command is bwrap's init's child, so its exit
 * status and the signals sent to it are its own. Uses JDK classes only: the sandbox mounts just this module's
 * classes (the launcher's {@code sallyport-sandbox-runner-*-inside.jar} with its ahead-of-time cache,
 * {@link InsideTraining}, when there is one).
 */
public final class Inside {
    /** Exit status when the sandbox cannot be set up (like {@code env(1)} and container runtimes). */
    public static final int SETUP_FAILED = 125;
    /** Exit status when the command cannot be started. */
    public static final int NOT_FOUND = 127;
    /** The first ABI whose Landlock governs pathname unix sockets ({@code LANDLOCK_ACCESS_FS_RESOLVE_UNIX}). */
    static final int UNIX_SOCKET_ABI = 9;
    private static final int BACKLOG = 128;
    /**
     * The options of every {@code Inside} JVM, trained or not ({@link InsideTraining} makes its cache with the same
     * ones, or the JVM would not use it): a helper of a tenth of a second, so the serial collector and no compiler
     * at all (the interpreter took less CPU than the first compiler, with the cache and without: 0.10 s against
     * 0.14 s, and 0.21 s against 0.27 s); nothing to attach to or read even while the setup lives (it leaves
     * before the command runs).
     */
    public static final List<String> JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-Xint",
            "-XX:+DisableAttachMechanism", "-XX:-UsePerfData", "-Xmx64m", "-Xss512k",
            "--enable-native-access=ALL-UNNAMED");

    private Inside() {
    }

    public static void main(String[] args) {
        int status;
        try {
            status = run(Launch.decode(Files.readAllBytes(Path.of(args[0]))));
        } catch (SetupException e) {
            System.err.println("sallyport sandbox: " + e.getMessage());
            status = e.status;
        } catch (IOException | RuntimeException e) {
            System.err.println("sallyport sandbox: setup failed: " + e.getMessage());
            status = SETUP_FAILED;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status);
    }

    /** Returns only when the command could not be started: the status to exit with. */
    private static int run(Launch launch) throws IOException, SetupException {
        for (String notice : launch.notices()) {
            System.err.println("sallyport sandbox: " + notice);
        }
        seed(launch.seeds());
        Landlock landlock = Landlock.forCurrentArch();
        // Not dumpable while it lives, although nothing else runs inside yet: execve resets the flag.
        landlock.setNotDumpable();
        // Without a cgroup: limits for this process, inherited by the command (set before any command runs).
        ProcessRlimits.apply(launch.rlimitData(), launch.rlimitTasks());
        int abi = Math.min(landlock.abi(), launch.landlockAbiCap());
        String warning = landlockCheck(abi, launch.requireLandlock());
        if (warning != null) {
            System.err.println("sallyport sandbox: warning: " + warning);
        }
        List<Landlock.PathRule> rules = new ArrayList<>();
        launch.readPaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.READ)));
        launch.writePaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.READ_WRITE)));
        launch.devicePaths().forEach(p -> rules.add(new Landlock.PathRule(Path.of(p), Landlock.DEVICES)));

        int listener = Sockets.tcpListener(launch.port(), BACKLOG);
        // With capture (every TCP port redirected to the listener), DNS over UDP is redirected to this one.
        int dns = launch.capture() ? Sockets.udpSocket(launch.port()) : -1;
        // and the IPv6 prefix to [::1]:PORT, where the namespace has IPv6
        int listener6 = launch.capture() ? tcp6ListenerOrNone(launch.port()) : -1;
        boolean supervise = launch.supervise() && abi < UNIX_SOCKET_ABI;
        int diag = supervise ? sockDiagOrNone() : -1;
        int host = Sockets.unixConnect(launch.socket());
        CompletableFuture<String> failure = new CompletableFuture<>();
        // Seccomp, Landlock and execve all act on the calling thread: one fresh thread does all three.
        Thread.ofPlatform().name("sallyport-exec").start(() -> {
            try {
                failure.complete(confineAndExec(launch, landlock, abi, rules,
                        new int[] {listener, dns, listener6}, diag, host));
            } catch (Throwable t) {
                failure.completeExceptionally(t);
            }
        });
        String reason;
        try {
            reason = failure.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SetupException setup) {
                throw setup;
            }
            throw new SetupException(SETUP_FAILED, String.valueOf(e.getCause().getMessage()));
        } catch (InterruptedException e) {
            throw new SetupException(SETUP_FAILED, "interrupted while starting the command");
        }
        throw new SetupException(NOT_FOUND, launch.command().getFirst() + ": cannot start inside the sandbox: "
                + reason + " (expected: a program on the sandbox's PATH or an absolute path)");
    }

    /** Copies each source to its target (the home's {@code .gitconfig}) unless the target exists. */
    private static void seed(List<String> seeds) throws IOException {
        for (int i = 0; i < seeds.size(); i += 2) {
            Path target = Path.of(seeds.get(i + 1));
            if (!Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(target.getParent());
                Files.copy(Path.of(seeds.get(i)), target);
            }
        }
    }

    private static String confineAndExec(Launch launch, Landlock landlock, int abi, List<Landlock.PathRule> rules,
                                         int[] sockets, int diag, int host) throws IOException, SetupException {
        int listener = sockets[0];
        int dns = sockets[1];
        int listener6 = sockets[2];
        int notify = -1;
        if (diag >= 0) {
            switch (Seccomp.installWithListener(SeccompFilter.workloadForCurrentArch(true))) {
                case Seccomp.Listener.Installed installed -> notify = installed.fd();
                case Seccomp.Listener.Unsupported _ -> { }
                case Seccomp.Listener.HeldAbove _ -> System.err.println("sallyport sandbox: warning: "
                        + listenerHeldAbove(abi, launch.requireLandlock()));
            }
        }
        if (notify < 0) {
            Seccomp.install(SeccompFilter.workloadForCurrentArch(false));
            Sockets.close(diag);
            if (launch.requireLandlock() && abi < UNIX_SOCKET_ABI) {
                throw new SetupException(SETUP_FAILED, "pathname unix sockets: neither Landlock (ABI " + abi
                        + ") nor a seccomp supervisor can keep the command from host sockets (expected: Landlock "
                        + "ABI >= 9, or a kernel with seccomp user notifications, because --require-landlock was given)");
            }
        }
        String what = (notify >= 0 ? HostLink.SUPERVISED : HostLink.LISTENER_ONLY)
                + (dns >= 0 ? HostLink.DNS_UDP : "") + (listener6 >= 0 ? HostLink.LISTENER6 : "");
        // In the order HostLink reads them: the listener, the supervisor's two, then the capture's.
        int[] fds = java.util.stream.IntStream.of(listener, notify >= 0 ? diag : -1, notify, dns, listener6)
                .filter(fd -> fd >= 0).toArray();
        FdPassing.send(host, what.getBytes(StandardCharsets.US_ASCII), fds);
        Sockets.close(notify);
        if (notify >= 0) {
            Sockets.close(diag);
        }
        Sockets.close(listener);
        Sockets.close(dns);
        Sockets.close(listener6);
        awaitGoAhead(host);
        Sockets.close(host);
        if (abi >= 1) {
            // TCP connect is the network namespace's to decide: it holds only the sandbox's servers and the listener
            landlock.restrictCurrentThread(rules, Landlock.ANY_PORT, abi);
        }
        System.out.flush();
        System.err.flush();
        return Exec.execvp(launch.command(), launch.env(), launch.cwd());
    }

    /** The host answers one byte once it relays the listener (and supervises): only then may the command run. */
    private static void awaitGoAhead(int host) throws IOException, SetupException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment answer = arena.allocate(1);
            int n = Sockets.read(host, answer, 1);
            if (n != 1 || answer.get(ValueLayout.JAVA_BYTE, 0) != HostLink.GO_AHEAD) {
                throw new SetupException(SETUP_FAILED, "the host did not take the sandbox's sockets (expected: "
                        + "its go-ahead; the runner's log says why)");
            }
        }
    }

    /** A listener on {@code [::1]:port}, or -1 when this network namespace has no IPv6. */
    private static int tcp6ListenerOrNone(int port) {
        try {
            return Sockets.tcp6Listener(port, BACKLOG);
        } catch (IOException e) {
            return -1;
        }
    }

    /** A sock_diag socket of this network namespace, or -1 when the kernel has none. */
    private static int sockDiagOrNone() {
        try {
            return Sockets.sockDiag();
        } catch (IOException e) {
            System.err.println("sallyport sandbox: warning: " + e.getMessage() + "; connect() to pathname unix "
                    + "sockets is not supervised");
            return -1;
        }
    }

    /**
     * Fails closed when Landlock is required and the kernel cannot enforce all rules (file system and TCP need
     * ABI 4); otherwise returns a warning for a degraded kernel, or null.
     */
    static String landlockCheck(int abi, boolean require) throws SetupException {
        if (abi >= 4) {
            return null;
        }
        String what = abi <= 0 ? "landlock: not available in this kernel"
                : "landlock: ABI " + abi + " enforces the file-system rules only, not the TCP rule";
        if (require) {
            throw new SetupException(SETUP_FAILED, what + " (expected: Landlock ABI >= 4, Linux 6.7+, because "
                    + "--require-landlock was given)");
        }
        return what + "; continuing with namespaces and seccomp (expected: ABI >= 4 for every rule)";
    }

    /**
     * What a seccomp listener held by a sandbox around this one means ({@code EBUSY}): fails closed when Landlock is
     * required (nothing else keeps the command from host unix sockets below ABI 9); otherwise the warning for the
     * run without the connect supervisor.
     */
    static String listenerHeldAbove(int abi, boolean require) throws SetupException {
        String what = "seccomp(SET_MODE_FILTER, NEW_LISTENER): " + Syscalls.errnoName(Syscalls.EBUSY)
                + ": another sandbox around this one already holds a seccomp notification listener (the kernel"
                + " allows one per process), so the host cannot supervise connect()";
        if (require) {
            throw new SetupException(SETUP_FAILED, what + " and Landlock ABI " + abi + " cannot keep the command"
                    + " from host unix sockets (expected: a run outside the other sandbox, a kernel with Landlock"
                    + " ABI >= 9, or no --require-landlock, which runs without that guard)");
        }
        return what + "; running without it: a host service's unix socket that appears in the workspace or a grant"
                + " during the run can be connected to (those there at the start stay covered; expected: a run"
                + " outside the other sandbox, or Landlock ABI >= 9, for that guard)";
    }

    static final class SetupException extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        int status() {
            return status;
        }

        SetupException(int status, String message) {
            super(message);
            this.status = status;
        }
    }
}
