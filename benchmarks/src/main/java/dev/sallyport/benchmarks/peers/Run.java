package dev.sallyport.benchmarks.peers;

import io.netty.handler.ssl.SslContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** State shared by the slots of one load run: options, TLS context, request tickets and the phase flags. */
final class Run {

    private final LoadOptions options;
    private final SslContext sslContext;
    private final List<Slot> slots = new ArrayList<>();
    private final AtomicLong tickets = new AtomicLong();
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger ready = new AtomicInteger();
    private volatile boolean measuring;
    private volatile boolean stopping;
    private CountDownLatch finished;

    Run(LoadOptions options, SslContext sslContext) {
        this.options = options;
        this.sslContext = sslContext;
    }

    LoadOptions options() {
        return options;
    }

    SslContext sslContext() {
        return sslContext;
    }

    void add(Slot slot) {
        slots.add(slot);
    }

    List<Slot> slots() {
        return slots;
    }

    /** Starts {@code n} slots (all when n exceeds the count) and arms the completion latch. */
    void start(int n) {
        finished = new CountDownLatch(slots.size());
        startMore(n);
    }

    /** After {@link #stop()}: lets the slots that never started finish at once. */
    void startRemaining() {
        startMore(slots.size());
    }

    private void startMore(int n) {
        for (int i = 0; i < n; i++) {
            int index = started.getAndIncrement();
            if (index >= slots.size()) {
                return;
            }
            slots.get(index).start();
        }
    }

    /** The next request's number, or -1 when the run is over (stopping, or the request count is reached). */
    long nextTicket() {
        if (stopping) {
            return -1;
        }
        long ticket = tickets.getAndIncrement();
        return options.requests() > 0 && ticket >= options.requests() ? -1 : ticket;
    }

    /** Idle-tunnel mode: one more tunnel carried its request; open the next one. */
    void tunnelReady() {
        ready.incrementAndGet();
        startMore(1);
    }

    int readyTunnels() {
        return ready.get();
    }

    boolean measuring() {
        return measuring;
    }

    void measuring(boolean value) {
        measuring = value;
    }

    boolean stopping() {
        return stopping;
    }

    void stop() {
        stopping = true;
    }

    void slotFinished() {
        finished.countDown();
    }

    CountDownLatch finished() {
        return finished;
    }
}
