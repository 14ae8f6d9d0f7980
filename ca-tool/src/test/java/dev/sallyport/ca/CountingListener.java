package dev.sallyport.ca;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts mints and cache hits, the way the metrics listener sees them. */
final class CountingListener implements MintListener {
    final List<String> minted = new CopyOnWriteArrayList<>();
    final List<Duration> durations = new CopyOnWriteArrayList<>();
    final AtomicInteger hits = new AtomicInteger();

    @Override
    public void minted(String host, Duration took) {
        minted.add(host);
        durations.add(took);
    }

    @Override
    public void cacheHit(String host) {
        hits.incrementAndGet();
    }
}
