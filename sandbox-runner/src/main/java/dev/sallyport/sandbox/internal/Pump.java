package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Copies bytes both ways between a connection accepted from the sandbox (a raw descriptor) and the proxy (a
 * channel), one platform thread per direction (blocking native reads would pin a virtual thread's carrier). When
 * one side ends, its output half to the other is shut down; both are closed when both directions are done, or
 * at once on an error or {@link #abort()} ({@code shutdown(2)} wakes the blocked native read, close alone would
 * not).
 */
final class Pump {
    static final long STACK = 256 * 1024;
    private static final int BUFFER = 64 * 1024;

    private final int inside;
    private final SocketChannel proxy;
    private final Consumer<Pump> done;
    private final AtomicInteger running = new AtomicInteger(2);
    /** Guards {@link #inside}: once closed, its number may belong to another descriptor. */
    private boolean insideClosed;

    Pump(int inside, SocketChannel proxy, Consumer<Pump> done) {
        this.inside = inside;
        this.proxy = proxy;
        this.done = done;
    }

    void start() {
        Thread.ofPlatform().daemon().name("sallyport-pump-up").stackSize(STACK).start(this::up);
        Thread.ofPlatform().daemon().name("sallyport-pump-down").stackSize(STACK).start(this::down);
    }

    private void up() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(BUFFER);
            ByteBuffer view = buffer.asByteBuffer();
            int n;
            while ((n = Sockets.read(inside, buffer, BUFFER)) > 0) {
                view.clear().limit(n);
                while (view.hasRemaining()) {
                    proxy.write(view);
                }
            }
            proxy.shutdownOutput();
        } catch (IOException e) {
            abort();
        } finally {
            finish();
        }
    }

    private void down() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(BUFFER);
            ByteBuffer view = buffer.asByteBuffer();
            int n;
            while ((n = proxy.read(view.clear())) >= 0) {
                Sockets.writeFully(inside, buffer, n);
            }
            Sockets.shutdown(inside, Sockets.SHUT_WR);
        } catch (IOException e) {
            abort();
        } finally {
            finish();
        }
    }

    /** Ends both directions now. */
    void abort() {
        synchronized (this) {
            if (!insideClosed) {
                Sockets.shutdown(inside, Sockets.SHUT_RDWR);
            }
        }
        try {
            proxy.close();
        } catch (IOException ignored) {
            // closing on an error path; the other side sees the close
        }
    }

    private void finish() {
        if (running.decrementAndGet() == 0) {
            synchronized (this) {
                insideClosed = true;
                Sockets.close(inside);
            }
            try {
                proxy.close();
            } catch (IOException ignored) {
                // already closed
            }
            done.accept(this);
        }
    }
}
