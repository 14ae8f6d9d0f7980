package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Sockets as raw file descriptors, through {@link Syscalls}: what the JDK's channels cannot do (hand a socket to
 * another process, accept on a socket another process created, connect a socket that belongs to the sandbox).
 * Every socket is created close-on-exec. Numbers are Linux's, the same on x86_64 and aarch64.
 */
final class Sockets {
    static final int AF_UNIX = 1;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int AF_NETLINK = 16;
    static final int SOCK_STREAM = 1;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_RAW = 3;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int NETLINK_SOCK_DIAG = 4;
    static final int SOL_SOCKET = 1;
    static final int SO_TYPE = 3;
    static final int SO_REUSEADDR = 2;
    static final int SO_PEERCRED = 17;
    static final int SO_ACCEPTCONN = 30;
    static final int SO_PROTOCOL = 38;
    static final int SO_DOMAIN = 39;
    static final int SHUT_RDWR = 2;
    static final int SHUT_WR = 1;
    /** {@code sizeof(struct sockaddr_un)}: family plus 108 bytes of path. */
    static final int SOCKADDR_UN_SIZE = 110;
    /** {@code sizeof(struct sockaddr_in6)}. */
    static final int SOCKADDR_IN6_SIZE = 28;
    private static final int ECONNABORTED = 103;

    /** The credentials of a unix socket's peer, as the kernel recorded them. */
    record Peer(int pid, int uid, int gid) {}

    private static final Syscalls SYS = Syscalls.current();

    private Sockets() {
    }

    /** A TCP socket listening on {@code 127.0.0.1:port} of the caller's network namespace. */
    static int tcpListener(int port, int backlog) throws IOException {
        return tcpListener(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), backlog);
    }

    /**
     * A TCP socket listening on the IPv4 address {@code at} of the caller's network namespace, with
     * {@code SO_REUSEADDR} (as the JDK's channels set it: a run after another on the same address is not refused for
     * the last one's connections in {@code TIME_WAIT}).
     */
    static int tcpListener(InetSocketAddress at, int backlog) throws IOException {
        int fd = (int) Syscalls.check(SYS.call("socket", AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(AF_INET)");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment one = arena.allocate(4, 4);
            one.set(ValueLayout.JAVA_INT, 0, 1);
            Syscalls.check(SYS.call("setsockopt", fd, SOL_SOCKET, SO_REUSEADDR, one.address(), 4),
                    "setsockopt SO_REUSEADDR");
            MemorySegment addr = inet4(arena, at);
            Syscalls.check(SYS.call("bind", fd, addr.address(), 16), "bind " + text(at));
            Syscalls.check(SYS.call("listen", fd, backlog, 0), "listen " + text(at));
            return fd;
        } catch (IOException e) {
            close(fd);
            throw e;
        }
    }

    /** A TCP socket listening on {@code [::1]:port} of the caller's network namespace. */
    static int tcp6Listener(int port, int backlog) throws IOException {
        int fd = (int) Syscalls.check(SYS.call("socket", AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(AF_INET6)");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(SOCKADDR_IN6_SIZE, 4);
            addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET6);
            addr.set(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
            addr.set(ValueLayout.JAVA_BYTE, 23, (byte) 1);        // ::1
            Syscalls.check(SYS.call("bind", fd, addr.address(), SOCKADDR_IN6_SIZE), "bind [::1]:" + port);
            Syscalls.check(SYS.call("listen", fd, backlog, 0), "listen [::1]:" + port);
            return fd;
        } catch (IOException e) {
            close(fd);
            throw e;
        }
    }

    /** A UDP socket bound to {@code 127.0.0.1:port} of the caller's network namespace. */
    static int udpSocket(int port) throws IOException {
        return udpSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    /** A UDP socket bound to the IPv4 address {@code at} of the caller's network namespace. */
    static int udpSocket(InetSocketAddress at) throws IOException {
        int fd = (int) Syscalls.check(SYS.call("socket", AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), "socket(AF_INET)");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = inet4(arena, at);
            Syscalls.check(SYS.call("bind", fd, addr.address(), 16), "bind udp " + text(at));
            return fd;
        } catch (IOException e) {
            close(fd);
            throw e;
        }
    }

    /** {@code struct sockaddr_in} of an IPv4 {@code address:port}. */
    private static MemorySegment inet4(Arena arena, InetSocketAddress at) throws IOException {
        if (!(at.getAddress() instanceof Inet4Address v4)) {
            throw new IOException("bind " + at + ": not an IPv4 address (expected: one)");
        }
        MemorySegment addr = arena.allocate(16, 4);
        addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET);
        addr.set(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) at.getPort());
        MemorySegment.copy(v4.getAddress(), 0, addr, ValueLayout.JAVA_BYTE, 4, 4);
        return addr;
    }

    private static String text(InetSocketAddress at) {
        return at.getAddress().getHostAddress() + ":" + at.getPort();
    }

    /**
     * The address in a {@code struct sockaddr_in} or {@code sockaddr_in6} (the kernel's bytes); null for another
     * family.
     */
    static /* @Nullable */ InetSocketAddress inetAddress(MemorySegment addr) {
        short family = addr.get(ValueLayout.JAVA_SHORT, 0);
        int port = Short.toUnsignedInt(addr.get(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2));
        try {
            if (family == AF_INET) {
                return new InetSocketAddress(InetAddress.getByAddress(addr.asSlice(4, 4)
                        .toArray(ValueLayout.JAVA_BYTE)), port);
            }
            if (family == AF_INET6 && addr.byteSize() >= SOCKADDR_IN6_SIZE) {
                return new InetSocketAddress(InetAddress.getByAddress(addr.asSlice(8, 16)
                        .toArray(ValueLayout.JAVA_BYTE)), port);
            }
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are always an address", e);
        }
        return null;
    }

    /** The peer of a connected IPv4 or IPv6 socket; null when the kernel cannot say (it is gone). */
    static /* @Nullable */ InetSocketAddress peerAddress(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(SOCKADDR_IN6_SIZE, 8);
            MemorySegment length = arena.allocate(4, 4);
            length.set(ValueLayout.JAVA_INT, 0, SOCKADDR_IN6_SIZE);
            return SYS.call("getpeername", fd, addr.address(), length.address()).failed() ? null : inetAddress(addr);
        }
    }

    /**
     * Waits for the next datagram: up to {@code max} bytes into {@code buffer}, its sender's {@code sockaddr} into
     * {@code from} (16 bytes); the datagram's length, 0 also after {@link #shutdown}.
     */
    static int receiveFrom(int fd, MemorySegment buffer, int max, MemorySegment from) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment length = arena.allocate(4, 4);
            while (true) {
                length.set(ValueLayout.JAVA_INT, 0, (int) from.byteSize());
                Syscalls.Result r = SYS.call6("recvfrom", fd, buffer.address(), max, 0, from.address(),
                        length.address());
                if (!r.failed()) {
                    return (int) r.value();
                }
                if (r.errno() != Syscalls.EINTR) {
                    throw new IOException("recvfrom: " + Syscalls.errnoName(r.errno()));
                }
            }
        }
    }

    /** Sends one datagram of {@code length} bytes to {@code to} (a {@code sockaddr} of {@code to.byteSize()}). */
    static void sendTo(int fd, MemorySegment buffer, int length, MemorySegment to) throws IOException {
        Syscalls.check(SYS.call6("sendto", fd, buffer.address(), length, 0, to.address(), to.byteSize()), "sendto");
    }

    /** A NETLINK_SOCK_DIAG socket: it asks about the sockets of the network namespace it was created in. */
    static int sockDiag() throws IOException {
        return (int) Syscalls.check(SYS.call("socket", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG),
                "socket(AF_NETLINK, NETLINK_SOCK_DIAG)");
    }

    /** A stream socket connected to the unix socket at {@code path}. */
    static int unixConnect(String path) throws IOException {
        int fd = (int) Syscalls.check(SYS.call("socket", AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(AF_UNIX)");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = unixAddress(arena, path);
            Syscalls.check(SYS.call("connect", fd, addr.address(), addr.byteSize()), "connect " + path);
            return fd;
        } catch (IOException e) {
            close(fd);
            throw e;
        }
    }

    /** A stream socket listening at {@code path} (the file must not exist). */
    static int unixListener(String path) throws IOException {
        int fd = (int) Syscalls.check(SYS.call("socket", AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(AF_UNIX)");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = unixAddress(arena, path);
            Syscalls.check(SYS.call("bind", fd, addr.address(), addr.byteSize()), "bind " + path);
            Syscalls.check(SYS.call("listen", fd, 1, 0), "listen " + path);
            return fd;
        } catch (IOException e) {
            close(fd);
            throw e;
        }
    }

    /** {@code struct sockaddr_un} for a path, sized to the path and its terminating NUL. */
    static MemorySegment unixAddress(Arena arena, String path) throws IOException {
        byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        if (bytes.length >= SOCKADDR_UN_SIZE - 2) {
            throw new IOException("unix socket path " + path + ": " + bytes.length + " bytes (expected: < 108)");
        }
        MemorySegment addr = arena.allocate(2 + bytes.length + 1, 2);
        addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
        MemorySegment.copy(bytes, 0, addr, ValueLayout.JAVA_BYTE, 2, bytes.length);
        return addr;
    }

    /** EMFILE, ENFILE, ENOBUFS, ENOMEM: the listener is fine, this process or the host is short of something. */
    private static final java.util.Set<Integer> SHORT_OF = java.util.Set.of(24, 23, 105, 12);

    /** An {@code accept} that failed for want of descriptors or memory: worth trying again a moment later. */
    static final class ShortOfResources extends IOException {
        private static final long serialVersionUID = 1L;

        ShortOfResources(String message) {
            super(message);
        }
    }

    /**
     * Waits for and returns the next connection on {@code listener} (close-on-exec).
     *
     * @throws ShortOfResources when this process or the host ran out of descriptors or memory (the listener is fine)
     */
    static int accept(int listener) throws IOException {
        while (true) {
            Syscalls.Result r = SYS.call("accept4", listener, 0, 0, SOCK_CLOEXEC, 0);
            if (!r.failed()) {
                return (int) r.value();
            }
            // ECONNABORTED: a client gave up before it was accepted; the listener is fine, the next may come
            if (r.errno() != Syscalls.EINTR && r.errno() != ECONNABORTED) {
                String message = "accept: " + Syscalls.errnoName(r.errno());
                throw SHORT_OF.contains(r.errno()) ? new ShortOfResources(message) : new IOException(message);
            }
        }
    }

    static int intOption(int fd, int level, int option) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(4, 4);
            MemorySegment length = arena.allocate(4, 4);
            length.set(ValueLayout.JAVA_INT, 0, 4);
            Syscalls.check(SYS.call("getsockopt", fd, level, option, value.address(), length.address()),
                    "getsockopt " + option);
            return value.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** The peer of a connected unix socket. */
    static Peer peer(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cred = arena.allocate(12, 4);
            MemorySegment length = arena.allocate(4, 4);
            length.set(ValueLayout.JAVA_INT, 0, 12);
            Syscalls.check(SYS.call("getsockopt", fd, SOL_SOCKET, SO_PEERCRED, cred.address(), length.address()),
                    "getsockopt SO_PEERCRED");
            return new Peer(cred.get(ValueLayout.JAVA_INT, 0), cred.get(ValueLayout.JAVA_INT, 4),
                    cred.get(ValueLayout.JAVA_INT, 8));
        }
    }

    /** {@code SOL_IP}'s {@code SO_ORIGINAL_DST} and {@code SOL_IPV6}'s {@code IP6T_SO_ORIGINAL_DST} (the same number). */
    private static final int SOL_IP = 0;
    private static final int SOL_IPV6 = 41;
    private static final int SO_ORIGINAL_DST = 80;

    /**
     * The destination an accepted IPv4 or IPv6 connection was sent to before a {@code redirect} of its network
     * namespace's nftables rewrote it, read from the kernel's connection tracking (the client cannot forge it); its
     * own local address when nothing rewrote it; null when the kernel tracks no connection for it.
     */
    static /* @Nullable */ InetSocketAddress originalDestination(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            boolean v6 = intOption(fd, SOL_SOCKET, SO_DOMAIN) == AF_INET6;
            MemorySegment addr = arena.allocate(SOCKADDR_IN6_SIZE, 8);
            MemorySegment length = arena.allocate(4, 4);
            length.set(ValueLayout.JAVA_INT, 0, v6 ? SOCKADDR_IN6_SIZE : 16);
            if (SYS.call("getsockopt", fd, v6 ? SOL_IPV6 : SOL_IP, SO_ORIGINAL_DST, addr.address(),
                    length.address()).failed() || addr.get(ValueLayout.JAVA_SHORT, 0) != (v6 ? AF_INET6 : AF_INET)) {
                return null;
            }
            return inetAddress(addr);
        } catch (IOException e) {
            return null;
        }
    }

    /** The port an INET socket is bound to. */
    static int localPort(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(128, 8);
            MemorySegment length = arena.allocate(4, 4);
            length.set(ValueLayout.JAVA_INT, 0, 128);
            Syscalls.check(SYS.call("getsockname", fd, addr.address(), length.address()), "getsockname");
            return Short.toUnsignedInt(addr.get(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2));
        }
    }

    /** Reads up to {@code max} bytes into {@code buffer}; 0 at end of stream. */
    static int read(int fd, MemorySegment buffer, int max) throws IOException {
        while (true) {
            Syscalls.Result r = SYS.call("read", fd, buffer.address(), max);
            if (!r.failed()) {
                return (int) r.value();
            }
            if (r.errno() != Syscalls.EINTR) {
                throw new IOException("read: " + Syscalls.errnoName(r.errno()));
            }
        }
    }

    /** Writes all {@code length} bytes. */
    static void writeFully(int fd, MemorySegment buffer, int length) throws IOException {
        long done = 0;
        while (done < length) {
            Syscalls.Result r = SYS.call("write", fd, buffer.address() + done, length - done);
            if (r.failed()) {
                if (r.errno() == Syscalls.EINTR) {
                    continue;
                }
                throw new IOException("write: " + Syscalls.errnoName(r.errno()));
            }
            done += r.value();
        }
    }

    /** {@code shutdown(2)}: wakes a thread blocked reading or accepting on the socket, unlike close. */
    static void shutdown(int fd, int how) {
        SYS.call("shutdown", fd, how, 0);
    }

    static void close(int fd) {
        if (fd >= 0) {
            SYS.call("close", fd, 0, 0);
        }
    }
}
