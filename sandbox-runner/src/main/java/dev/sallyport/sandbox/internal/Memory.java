package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Reads a few bytes of another process's memory ({@code /proc/PID/mem}): the arguments a system call points to. */
final class Memory {
    private Memory() {
    }

    /** {@code length} bytes at {@code address} of {@code pid}, or null when they cannot be read. */
    static byte[] read(int pid, long address, int length) {
        if (address < 0 || length < 0) {
            return null;
        }
        ByteBuffer buffer = ByteBuffer.allocate(length);
        try (FileChannel mem = FileChannel.open(Path.of("/proc/" + pid + "/mem"), StandardOpenOption.READ)) {
            while (buffer.hasRemaining()) {
                if (mem.read(buffer, address + buffer.position()) <= 0) {
                    return null;
                }
            }
            return buffer.array();
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }
}
