package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The host's answer to every {@code connect(2)} of the sandboxed command (seccomp user notifications, listener
 * handed over by {@link HostLink}). Below Landlock ABI 9 nothing in the kernel keeps the command from pathname
 * unix sockets of host daemons that lie in the workspace, so the host makes every connect itself, on the
 * command's own socket ({@code pidfd_getfd}), with a copy of the address read once from the command's memory:
 * the kernel never reads the command's arguments again, which leaves nothing to swap in between (the classic
 * weakness of "check, then let the kernel continue"). A pathname is resolved by {@link UnixTarget} inside the
 * command's root and allowed only when {@link UnixPeers} finds a socket of the sandbox bound to that very file;
 * anything else is answered {@code EACCES}, as Landlock ABI 9 would. TCP connects are made as asked: they stay in
 * the sandbox's network namespace, where the socket was made.
 */
final class ConnectSupervisor implements AutoCloseable {
    private static final long NOTIF_RECV = 0xC0502100L;
    private static final long NOTIF_SEND = 0xC0182101L;
    private static final long NOTIF_ID_VALID = 0x40082102L;
    private static final int NOTIF_SIZE = 80;
    private static final int RESP_SIZE = 24;
    private static final int POLLIN = 0x1;
    private static final int MAX_ADDRESS = 128;
    private static final int WORKERS = 64;
    private static final int MAX_REPORTED = 20;
    private static final int ENOTSOCK = 88;
    private static final int PIDFD_THREAD = 0x80;
    private static final Syscalls SYS = Syscalls.current();

    /**
     * One {@code connect(fd, addr, addrlen)} waiting for an answer; {@code fd} and {@code length} are the low 32
     * bits of their registers, as the kernel reads an {@code int} argument.
     */
    record Call(long id, int pid, int nr, int fd, long address, int length) {}

    private final int listener;
    private final int[] wake;
    private final UnixPeers peers;
    private final OnBehalf onBehalf;
    private final ThreadPoolExecutor workers;
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Guards {@link #wake}: closed by the loop when it ends, written by {@link #close()} only before that. */
    private boolean finished;

    private ConnectSupervisor(int listener, int[] wake, UnixPeers peers, HostLink.Rules rules) {
        this.listener = listener;
        this.wake = wake;
        this.peers = peers;
        this.onBehalf = new OnBehalf(rules, SYS.call("geteuid", 0, 0, 0).value() == 0);
        this.workers = new ThreadPoolExecutor(0, WORKERS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                Thread.ofPlatform().daemon().name("sallyport-connect-", 0).stackSize(Pump.STACK).factory());
    }

    /** Takes ownership of {@code listener} and {@code peers} and answers notifications until the sandbox ends. */
    static ConnectSupervisor start(int listener, UnixPeers peers, HostLink.Rules rules) throws IOException {
        int[] wake = pipe();
        ConnectSupervisor s = new ConnectSupervisor(listener, wake, peers, rules);
        Thread.ofPlatform().daemon().name("sallyport-connect-supervisor").start(s::loop);
        return s;
    }

    /** True when this kernel lets the host do what the supervisor does (Linux 5.6: pidfd_getfd, openat2). */
    static boolean available() {
        return SYS.call("pidfd_getfd", -1, 0, 0).errno() != Syscalls.ENOSYS && UnixTarget.available();
    }

    private void loop() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(16, 4);     // two struct pollfd { int fd; short events, revents; }
            fds.set(ValueLayout.JAVA_INT, 0, listener);
            fds.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
            fds.set(ValueLayout.JAVA_INT, 8, wake[0]);
            fds.set(ValueLayout.JAVA_SHORT, 12, (short) POLLIN);
            MemorySegment notif = arena.allocate(NOTIF_SIZE, 8);
            while (!closed) {
                fds.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                fds.set(ValueLayout.JAVA_SHORT, 14, (short) 0);
                Syscalls.Result r = SYS.call("ppoll", fds.address(), 2, 0, 0, 0);
                if (r.failed()) {
                    if (r.errno() == Syscalls.EINTR) {
                        continue;
                    }
                    return;
                }
                int revents = fds.get(ValueLayout.JAVA_SHORT, 6);
                if (fds.get(ValueLayout.JAVA_SHORT, 14) != 0 || ((revents & ~POLLIN) != 0 && (revents & POLLIN) == 0)) {
                    return;     // woken by close(), or no process of the sandbox is left (POLLHUP)
                }
                notif.fill((byte) 0);
                if (SYS.call("ioctl", listener, NOTIF_RECV, notif.address()).failed()) {
                    continue;   // the caller was killed meanwhile (ENOENT), or a signal (EINTR)
                }
                Call call = new Call(notif.get(ValueLayout.JAVA_LONG, 0), notif.get(ValueLayout.JAVA_INT, 8),
                        notif.get(ValueLayout.JAVA_INT, 16), (int) notif.get(ValueLayout.JAVA_LONG, 32),
                        notif.get(ValueLayout.JAVA_LONG, 40), (int) notif.get(ValueLayout.JAVA_LONG, 48));
                try {
                    workers.execute(() -> serve(call));
                } catch (RejectedExecutionException e) {
                    respond(call.id(), -Syscalls.EAGAIN);     // WORKERS connects already waiting
                }
            }
        } finally {
            workers.shutdown();
            Sockets.close(listener);
            peers.close();
            synchronized (this) {
                finished = true;
                Sockets.close(wake[0]);
                Sockets.close(wake[1]);
            }
        }
    }

    private void serve(Call call) {
        long result = -Syscalls.EPERM;
        try {
            result = answer(call);
        } finally {
            respond(call.id(), result);     // even when this thread is lost: nobody waits forever
        }
    }

    /** The connect's result: 0 or a negated errno. */
    private long answer(Call call) {
        if (call.nr() != SYS.arch().nr("connect")) {
            return -Syscalls.ENOSYS;
        }
        if (call.length() < 0 || call.length() > MAX_ADDRESS) {
            return -Syscalls.EINVAL;
        }
        int pidfd = -1;
        int socket = -1;
        try {
            pidfd = pidfd(call.pid());
            if (!valid(call.id())) {
                return -Syscalls.EPERM;
            }
            Syscalls.Result dup = SYS.call("pidfd_getfd", pidfd, call.fd(), 0);
            if (dup.failed()) {
                return -dup.errno();
            }
            socket = (int) dup.value();
            byte[] address = Memory.read(call.pid(), call.address(), call.length());
            if (address == null || !valid(call.id())) {
                return -Syscalls.EFAULT;
            }
            return decide(call, socket, address);
        } catch (IOException | NumberFormatException e) {
            return -Syscalls.EPERM;
        } finally {
            Sockets.close(socket);
            Sockets.close(pidfd);
        }
    }

    /**
     * A pidfd for the calling thread (Linux 6.9: {@code PIDFD_THREAD}), else for its process: the id the
     * notification names is a thread's, and only a process leader has a pidfd before 6.9.
     */
    private static int pidfd(int tid) throws IOException {
        Syscalls.Result r = SYS.call("pidfd_open", tid, PIDFD_THREAD, 0);
        if (!r.failed()) {
            return (int) r.value();
        }
        int tgid = -1;
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + tid + "/status"))) {
            if (line.startsWith("Tgid:")) {
                tgid = Integer.parseInt(line.substring(5).trim());
            }
        }
        return (int) Syscalls.check(SYS.call("pidfd_open", tgid, 0, 0), "pidfd_open " + tgid);
    }

    private long decide(Call call, int socket, byte[] address) throws IOException {
        int domain;
        try {
            domain = Sockets.intOption(socket, Sockets.SOL_SOCKET, Sockets.SO_DOMAIN);
        } catch (IOException e) {
            return -ENOTSOCK;
        }
        int family = address.length >= 2 ? (address[0] & 0xff) | (address[1] & 0xff) << 8 : -1;
        if (domain == Sockets.AF_UNIX && family == Sockets.AF_UNIX && address.length > Sockets.SOCKADDR_UN_SIZE) {
            return -Syscalls.EINVAL;            // what the kernel answers for a longer sockaddr_un
        }
        if (domain == Sockets.AF_UNIX && family == Sockets.AF_UNIX && address.length > 2 && address[2] != 0) {
            return unixPath(call, socket, address);
        }
        return onBehalf.connect(socket, address, false);
    }

    private long unixPath(Call call, int socket, byte[] address) throws IOException {
        int end = 2;
        while (end < address.length && address[end] != 0) {
            end++;
        }
        byte[] path = java.util.Arrays.copyOfRange(address, 2, end);
        try (UnixTarget.Dirs dirs = UnixTarget.dirs(call.pid())) {
            if (!valid(call.id())) {
                return -Syscalls.EPERM;
            }
            try (UnixTarget.Resolved target = UnixTarget.resolve(dirs, path)) {
                if (!peers.sandboxOwns(target.id())) {
                    report(new String(path, java.nio.charset.StandardCharsets.UTF_8));
                    return -Syscalls.EACCES;
                }
                byte[] via = target.viaProc().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                byte[] sockaddr = new byte[2 + via.length + 1];
                sockaddr[0] = (byte) Sockets.AF_UNIX;
                System.arraycopy(via, 0, sockaddr, 2, via.length);
                return onBehalf.connect(socket, sockaddr, true);
            } catch (UnixTarget.Refused e) {
                return -e.errno();
            }
        }
    }

    private void report(String path) {
        if (reported.size() < MAX_REPORTED && reported.add(path)) {
            LoggerFactory.getLogger(ConnectSupervisor.class).warn("sandbox: refused connect() to the unix socket {}: "
                    + "the sandbox did not create it (a host service's socket in a folder the sandbox sees)", path);
        }
    }

    private boolean valid(long id) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(8, 8);
            value.set(ValueLayout.JAVA_LONG, 0, id);
            return !SYS.call("ioctl", listener, NOTIF_ID_VALID, value.address()).failed();
        }
    }

    private void respond(long id, long result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment resp = arena.allocate(RESP_SIZE, 8);
            resp.set(ValueLayout.JAVA_LONG, 0, id);
            resp.set(ValueLayout.JAVA_LONG, 8, result < 0 ? -1 : result);
            resp.set(ValueLayout.JAVA_INT, 16, result < 0 ? (int) result : 0);
            SYS.call("ioctl", listener, NOTIF_SEND, resp.address());   // ENOENT: the caller is gone
        }
    }

    private static int[] pipe() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(8, 4);
            Syscalls.check(SYS.call("pipe2", fds.address(), 0x80000 /* O_CLOEXEC */, 0), "pipe2");
            return new int[] {fds.get(ValueLayout.JAVA_INT, 0), fds.get(ValueLayout.JAVA_INT, 4)};
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (!finished) {
            try (Arena arena = Arena.ofConfined()) {
                SYS.call("write", wake[1], arena.allocate(1).address(), 1);
            }
        }
    }
}
