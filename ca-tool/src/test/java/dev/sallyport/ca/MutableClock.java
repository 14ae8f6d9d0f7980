package dev.sallyport.ca;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicReference;

/** A test clock that moves only when told to. Starts at the current time truncated to seconds. */
final class MutableClock implements InstantSource {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now().truncatedTo(ChronoUnit.SECONDS));

    @Override
    public Instant instant() {
        return now.get();
    }

    void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }

    void set(Instant t) {
        now.set(t);
    }
}
