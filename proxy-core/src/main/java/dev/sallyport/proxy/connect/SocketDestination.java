package dev.sallyport.proxy.connect;

import io.netty.channel.Channel;
import io.netty.channel.unix.UnixChannel;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.Optional;

/**
 * Where a connection that the host's nftables redirected (DNAT, REDIRECT) to the proxy was headed: the kernel's
 * connection tracking keeps the original destination, which {@code getsockopt(SOL_IP, SO_ORIGINAL_DST)} (IPv4) or
 * {@code getsockopt(SOL_IPV6, IP6T_SO_ORIGINAL_DST)} (IPv6) reads from the accepted socket, through
 * {@code java.lang.foreign}. Empty when the kernel keeps none (no connection tracking, or a socket of the NIO
 * transport, which has no file descriptor to ask).
 */
final class SocketDestination {

    private static final int SOL_IP = 0;
    private static final int SOL_IPV6 = 41;
    /** {@code SO_ORIGINAL_DST} and {@code IP6T_SO_ORIGINAL_DST} have the same number. */
    private static final int ORIGINAL_DST = 80;
    private static final short AF_INET = 2;
    private static final short AF_INET6 = 10;
    private static final int SOCKADDR_IN6 = 28;
    private static final MethodHandle GETSOCKOPT = getsockopt();

    private SocketDestination() {}

    /** True when this JVM can ask the kernel (native access and the native transport). */
    static boolean available() {
        return GETSOCKOPT != null;
    }

    /** The original destination of {@code ch}'s connection, as the kernel's connection tracking kept it. */
    static Optional<InetSocketAddress> of(Channel ch) {
        if (GETSOCKOPT == null || !(ch instanceof UnixChannel unix)) {
            return Optional.empty();
        }
        int fd = unix.fd().intValue();
        boolean v6 = ch.localAddress() instanceof InetSocketAddress local && local.getAddress() instanceof Inet6Address;
        Optional<InetSocketAddress> first = ask(fd, v6 ? SOL_IPV6 : SOL_IP);
        return first.isPresent() ? first : ask(fd, v6 ? SOL_IP : SOL_IPV6);
    }

    private static Optional<InetSocketAddress> ask(int fd, int level) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(SOCKADDR_IN6, 8);
            MemorySegment length = arena.allocate(ValueLayout.JAVA_INT);
            length.set(ValueLayout.JAVA_INT, 0, SOCKADDR_IN6);
            int r = (int) GETSOCKOPT.invokeExact(fd, level, ORIGINAL_DST, addr, length);
            if (r != 0) {
                return Optional.empty();
            }
            short family = addr.get(ValueLayout.JAVA_SHORT, 0);
            int port = Short.toUnsignedInt(addr.get(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2));
            byte[] ip;
            if (family == AF_INET && level == SOL_IP) {
                ip = addr.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE);
            } else if (family == AF_INET6 && level == SOL_IPV6) {
                ip = addr.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
            } else {
                return Optional.empty();
            }
            return Optional.of(new InetSocketAddress(InetAddress.getByAddress(ip), port));
        } catch (Throwable t) {
            return Optional.empty();     // cannot tell: the caller refuses the connection
        }
    }

    @SuppressWarnings("restricted")    // the launcher and the tests enable native access for this module
    private static MethodHandle getsockopt() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find("getsockopt").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        } catch (RuntimeException e) {
            return null;
        }
    }
}
