package dev.sallyport.proxy.upstream;

import io.netty.channel.Channel;
import io.netty.channel.unix.UnixChannel;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Whether the kernel holds bytes (or the end of the stream) on an idle upstream socket that the proxy has not read
 * yet: one {@code recv(fd, buf, 1, MSG_PEEK | MSG_DONTWAIT)} through {@code java.lang.foreign}. An idle pooled
 * connection reads whatever arrives and leaves the pool, but bytes that arrived a moment before another exchange
 * takes the connection may not have been read yet; they would be read as that exchange's response. Checked on every
 * reuse. With the NIO transport (no file descriptor to ask) the answer is "quiet", as before this check.
 */
final class PendingInput {

    private static final int MSG_PEEK = 0x2;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int EAGAIN = 11;
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle RECV = recv();

    /** Per event-loop thread: the errno capture and the byte {@code recv} may copy into. */
    private record Scratch(MemorySegment state, MemorySegment buf) {}

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(() -> {
        Arena arena = Arena.ofAuto();
        return new Scratch(arena.allocate(CAPTURE), arena.allocate(1));
    });

    private PendingInput() {}

    /** True when nothing waits unread on {@code ch}'s socket (or it cannot be told). */
    static boolean quiet(Channel ch) {
        if (RECV == null || !(ch instanceof UnixChannel unix)) {
            return true;
        }
        Scratch s = SCRATCH.get();
        try {
            long n = (long) RECV.invokeExact(s.state(), unix.fd().intValue(), s.buf(), 1L, MSG_PEEK | MSG_DONTWAIT);
            return n == -1 && (int) ERRNO.get(s.state(), 0L) == EAGAIN;
        } catch (Throwable t) {
            return false;   // cannot tell on a socket that should have answered: do not reuse it
        }
    }

    @SuppressWarnings("restricted")    // the launcher and the tests enable native access for this module
    private static MethodHandle recv() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find("recv").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT), Linker.Option.captureCallState("errno"));
        } catch (RuntimeException e) {
            return null;
        }
    }
}
