package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Copies bytes both ways between two connected channels on two virtual threads; when one side ends, its
 * output half to the other side is shut down, and both are closed when both directions are done.
 */
final class Pump {
    private Pump() {
    }

    static void start(SocketChannel a, SocketChannel b) {
        Thread up = Thread.ofVirtual().name("sallyport-pump").start(() -> copy(a, b));
        Thread.ofVirtual().name("sallyport-pump").start(() -> {
            copy(b, a);
            try {
                up.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeQuietly(a);
            closeQuietly(b);
        });
    }

    private static void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing on an error path; the other side sees the close
        }
    }
}
