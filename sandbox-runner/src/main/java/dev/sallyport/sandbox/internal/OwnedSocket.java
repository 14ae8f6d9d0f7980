package dev.sallyport.sandbox.internal;

/**
 * A socket's descriptor number with one owner, shut down and closed at most once. A number is only a number: once
 * closed, the kernel hands it to the next socket this process opens (the lowest free one), so a late
 * {@code shutdown(2)} on a closed number ends whatever socket holds it now. With several sandboxes run by one JVM
 * that was the listener of another sandbox, whose command then found no proxy on its inside port.
 */
final class OwnedSocket {
    private final int fd;
    /** Guarded by {@code this}: after it is set, {@link #fd} may belong to another socket. */
    private boolean closed;

    OwnedSocket(int fd) {
        this.fd = fd;
    }

    /** The number, for the blocking call of the thread that closes it (only that thread may use it). */
    int fd() {
        return fd;
    }

    /** Wakes a thread blocked accepting or reading on it; nothing once it is closed. */
    synchronized void shutdown() {
        if (!closed) {
            Sockets.shutdown(fd, Sockets.SHUT_RDWR);
        }
    }

    synchronized void close() {
        if (!closed) {
            closed = true;
            Sockets.close(fd);
        }
    }
}
