package dev.sallyport.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reports a leaked buffer during it, instead of a log line nobody reads. As a JUnit
 * extension it installs paranoid leak detection before the class's first test and, after its last
 * ({@code @AfterAll} methods included), forces pending reports out and fails the class on any leak seen since the
 * previous check. proxy-core registers it for every test class (its {@code junit-platform.properties} turns on
 * extension auto-detection and {@code META-INF/services} names this class); elsewhere use
 * {@code @ExtendWith(LeakCheck.class)}.
 *
 * <p>Detection only sees buffer classes created after {@link #install()}: fixtures that start Netty call it too.
 */
public final class LeakCheck implements BeforeAllCallback, AfterAllCallback {

    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static volatile boolean installed;

    /** For JUnit. */
    public LeakCheck() {
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        install();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = drain();
        if (!leaks.isEmpty()) {
            Assertions.fail("Netty buffer leaks in or before " + context.getDisplayName() + " (expected: none): "
                    + leaks);
        }
    }

    /** Turns on paranoid detection and records every leak reported from now on; idempotent. */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")    // the factory method Netty still calls
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                     long maxActive) {
                return new Recording<>(resource, samplingInterval);
            }
        });
    }

    /**
     * Forces collection and allocation so pending leak reports surface, then returns (and forgets) every leak
     * reported since the previous call.
     */
    public static List<String> drain() {
        for (int i = 0; i < 5; i++) {
            System.gc();
            for (int j = 0; j < 64; j++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(16);
                b.release();
            }
        }
        List<String> out = new ArrayList<>();
        for (String leak = LEAKS.poll(); leak != null; leak = LEAKS.poll()) {
            out.add(leak);
        }
        return out;
    }

    private static final class Recording<T> extends ResourceLeakDetector<T> {
        @SuppressWarnings("deprecation")        // the constructor the factory hands its arguments to
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
