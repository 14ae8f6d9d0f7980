package dev.sallyport.proxy.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every leak Netty's detector reports (tests run with {@code -Dio.netty.leakDetection.level=paranoid}),
 * so a test can fail on one instead of a log line nobody reads. Installed before the first buffer class loads.
 */
public final class LeakCheck {

    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    private LeakCheck() {}

    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                     long maxActive) {
                return new Recording<>(resource, samplingInterval);
            }
        });
    }

    /** Forces collection and allocation so pending leak reports surface, then returns all leaks seen so far. */
    public static List<String> collect() {
        for (int i = 0; i < 5; i++) {
            System.gc();
            for (int j = 0; j < 64; j++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(16);
                b.release();
            }
        }
        return List.copyOf(LEAKS);
    }

    private static final class Recording<T> extends ResourceLeakDetector<T> {
        Recording(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            LEAKS.add(resourceType + ": " + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            LEAKS.add(resourceType);
            super.reportUntracedLeak(resourceType);
        }
    }
}
