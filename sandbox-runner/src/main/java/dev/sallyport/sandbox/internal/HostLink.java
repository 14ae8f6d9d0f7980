package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * The host end of the sandbox, reached once: a unix socket in the runtime folder (bind-mounted inside) where
 * {@link Inside} hands over the sandbox's listening socket, and, when supervised, a sock_diag socket of the
 * sandbox's network namespace and its seccomp listener, and, with capture, its UDP socket for DNS. The host checks
 * what it got (a process of this sandbox sent it; a listening TCP socket on the inside port; a netlink sock_diag
 * socket; a seccomp listener; a UDP socket on the inside port), starts the {@link ProxyRelay} on the listener, the
 * {@link ConnectSupervisor} on the next two and the {@link DnsDatagramRelay} on the last, answers the
 * go-ahead, and removes the socket file: after that no pathname socket of the host is left in the sandbox. The
 * process that connected becomes the command (it execs it): its {@link CommandGroup} is where
 * {@link #windowChanged()} sends the terminal's SIGWINCH.
 */
public final class HostLink implements AutoCloseable {
    static final String LISTENER_ONLY = "sallyport-link/1 listener";
    static final String SUPERVISED = "sallyport-link/1 listener sock-diag seccomp";
    /** Appended to either when the last descriptor is the sandbox's UDP socket for DNS (transparent capture). */
    static final String DNS_UDP = " dns-udp";
    /** Appended last when the next descriptor is the sandbox's listener on {@code [::1]} (capture over IPv6). */
    static final String LISTENER6 = " listener6";
    static final byte GO_AHEAD = 'K';

    /** The port the setup's sockets must be on, the uid and gid the supervisor connects as, the relay's budget. */
    public record Rules(int insidePort, int workloadUid, int workloadGid,
                        RelayBudget budget) {
        public Rules {
            java.util.Objects.requireNonNull(budget, "budget");
        }

        /** The same, with the budget of a sandbox whose task limit is unknown ({@link RelayBudget#MOST}). */
        public Rules(int insidePort, int workloadUid, int workloadGid) {
            this(insidePort, workloadUid, workloadGid, RelayBudget.unknownTasks());
        }
    }

    private final Path socket;
    private final OwnedSocket server;
    private volatile boolean closed;
    private volatile ProxyRelay relay;
    private volatile DnsDatagramRelay dnsRelay;
    private volatile ConnectSupervisor supervisor;
    private volatile CommandGroup command;
    private Thread thread;

    private HostLink(Path socket, int server) {
        this.socket = socket;
        this.server = new OwnedSocket(server);
    }

    /** True when this kernel lets the host supervise the command's connects ({@link ConnectSupervisor}). */
    public static boolean canSupervise() {
        return ConnectSupervisor.available();
    }

    /** Binds the unix socket at {@code socket} (inside the runtime folder). */
    public static HostLink listen(Path socket) throws IOException {
        return new HostLink(socket, Sockets.unixListener(socket.toString()));
    }

    /**
     * Waits, on a thread of its own, for the one connection from {@code sandbox} (the bwrap process); runs
     * {@code mountsDone} when it arrives (bwrap has built every mount by then).
     */
    public synchronized void start(ProcessHandle sandbox, ProxyRelay.Targets proxy, Rules rules, Runnable mountsDone) {
        if (thread != null) {
            throw new IllegalStateException("sandbox link: started twice or already closed (expected: one start)");
        }
        thread = Thread.ofPlatform().daemon().name("sallyport-sandbox-link").start(() -> accept(sandbox, proxy, rules, mountsDone));
    }

    private void accept(ProcessHandle sandbox, ProxyRelay.Targets proxy, Rules rules, Runnable mountsDone) {
        int conn = -1;
        FdPassing.Message message = null;
        try {
            conn = Sockets.accept(server.fd());
            dev.sallyport.sandbox.StartTrace.mark("setup connected");
            mountsDone.run();       // bwrap ran the setup: the sandbox's mounts are all made
            Sockets.Peer peer = Sockets.peer(conn);
            if (!descendsFrom(peer.pid(), sandbox)) {
                throw new IOException("pid " + peer.pid() + " is not a process of this sandbox");
            }
            command = groupOf(peer.pid(), sandbox);
            message = FdPassing.receive(conn, 128, 5);
            take(message, proxy, rules);
            message = null;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment go = arena.allocate(1);
                go.set(ValueLayout.JAVA_BYTE, 0, GO_AHEAD);
                Sockets.writeFully(conn, go, 1);
                dev.sallyport.sandbox.StartTrace.mark("setup told to go ahead");
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LoggerFactory.getLogger(HostLink.class).warn("sandbox: the setup's hand-over was refused: {} "
                        + "(expected: the listening socket from this sandbox's setup)", e.getMessage());
            }
            if (message != null) {
                Arrays.stream(message.fds()).forEach(Sockets::close);
            }
        } finally {
            Sockets.close(conn);
            stopListening();
            server.close();
        }
    }

    private void take(FdPassing.Message message, ProxyRelay.Targets proxy, Rules rules) throws IOException {
        String what = new String(message.payload(), StandardCharsets.US_ASCII);
        int[] fds = message.fds();
        String base = what;
        boolean v6 = proxy.capture() && base.endsWith(LISTENER6);
        base = v6 ? base.substring(0, base.length() - LISTENER6.length()) : base;
        boolean udp = proxy.capture() && base.endsWith(DNS_UDP);
        base = udp ? base.substring(0, base.length() - DNS_UDP.length()) : base;
        int expected = base.equals(SUPERVISED) ? 3 : base.equals(LISTENER_ONLY) ? 1 : -1;
        if (expected < 0 || fds.length != expected + (udp ? 1 : 0) + (v6 ? 1 : 0)) {
            throw new IOException("'" + what + "' with " + fds.length + " descriptors (expected: '" + LISTENER_ONLY
                    + "' with 1 or '" + SUPERVISED + "' with 3, and when the run captures one more for each of '"
                    + DNS_UDP.trim() + "' and '" + LISTENER6.trim() + "')");
        }
        int dns = udp ? fds[expected] : -1;
        int listener6 = v6 ? fds[fds.length - 1] : -1;
        if (v6 && (Sockets.intOption(listener6, Sockets.SOL_SOCKET, Sockets.SO_DOMAIN) != Sockets.AF_INET6
                || Sockets.intOption(listener6, Sockets.SOL_SOCKET, Sockets.SO_ACCEPTCONN) != 1
                || Sockets.localPort(listener6) != rules.insidePort())) {
            throw new IOException("descriptor " + fds.length + " is not a TCP socket listening on [::1]:"
                    + rules.insidePort());
        }
        if (udp && (Sockets.intOption(dns, Sockets.SOL_SOCKET, Sockets.SO_DOMAIN) != Sockets.AF_INET
                || Sockets.intOption(dns, Sockets.SOL_SOCKET, Sockets.SO_TYPE) != Sockets.SOCK_DGRAM
                || Sockets.localPort(dns) != rules.insidePort())) {
            throw new IOException("descriptor " + (expected + 1) + " is not a UDP socket on port " + rules.insidePort());
        }
        int listener = fds[0];
        if (Sockets.intOption(listener, Sockets.SOL_SOCKET, Sockets.SO_DOMAIN) != Sockets.AF_INET
                || Sockets.intOption(listener, Sockets.SOL_SOCKET, Sockets.SO_ACCEPTCONN) != 1
                || Sockets.localPort(listener) != rules.insidePort()) {
            throw new IOException("descriptor 1 is not a TCP socket listening on port " + rules.insidePort());
        }
        if (expected == 3) {
            if (Sockets.intOption(fds[1], Sockets.SOL_SOCKET, Sockets.SO_DOMAIN) != Sockets.AF_NETLINK
                    || Sockets.intOption(fds[1], Sockets.SOL_SOCKET, Sockets.SO_PROTOCOL) != Sockets.NETLINK_SOCK_DIAG) {
                throw new IOException("descriptor 2 is not a NETLINK_SOCK_DIAG socket");
            }
            String kind = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fds[2])).toString();
            if (!kind.equals("anon_inode:seccomp notify")) {
                throw new IOException("descriptor 3 is " + kind + ", not a seccomp listener");
            }
        }
        relay = ProxyRelay.start(listener, listener6, rules.insidePort(), proxy, rules.budget());
        if (udp) {
            dnsRelay = DnsDatagramRelay.start(dns, proxy.dns(), proxy.dnsHeader());
        }
        if (expected == 3) {
            supervisor = ConnectSupervisor.start(fds[2], new UnixPeers(fds[1]), rules);
        }
    }

    /** Tells the command's process group that the terminal's window changed size (SIGWINCH). */
    public void windowChanged() {
        CommandGroup c = command;
        if (c != null && !closed) {
            c.signal(CommandGroup.SIGWINCH);
        }
    }

    /** The process group of {@code pid} when its leader is a process of the sandbox (bwrap's init), else null. */
    private static CommandGroup groupOf(int pid, ProcessHandle sandbox) {
        CommandGroup group = CommandGroup.of(pid).orElse(null);
        if (group != null && !descendsFrom(group.leader(), sandbox)) {
            group.close();
            return null;
        }
        return group;
    }

    private static boolean descendsFrom(int pid, ProcessHandle ancestor) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        for (int depth = 0; depth < 8 && p.isPresent(); depth++) {
            if (p.get().pid() == ancestor.pid()) {
                return true;
            }
            p = p.get().parent();
        }
        return false;
    }

    private void stopListening() {
        server.shutdown();
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            // the runtime folder is removed at close anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        stopListening();
        Thread t;
        synchronized (this) {
            t = thread;
            if (t == null) {
                thread = Thread.currentThread();
                server.close();
            }
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ConnectSupervisor s = supervisor;
        if (s != null) {
            s.close();
        }
        ProxyRelay r = relay;
        if (r != null) {
            r.close();
        }
        DnsDatagramRelay d = dnsRelay;
        if (d != null) {
            d.close();
        }
        CommandGroup c = command;
        if (c != null) {
            c.close();
        }
    }
}
