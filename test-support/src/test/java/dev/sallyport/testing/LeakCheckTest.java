package dev.sallyport.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** A class whose test drops a buffer without releasing it fails after its last test; one that releases passes. */
@ExtendWith(LeakCheck.class)
class LeakCheckTest {

    @Test
    void aClassThatLeaksABufferFails() {
        TestExecutionSummary summary = run(Leaks.class);
        assertThat(summary.getTestsSucceededCount()).as("the test itself passes").isEqualTo(1);
        List<Throwable> failures = summary.getFailures().stream().map(TestExecutionSummary.Failure::getException)
                .toList();
        assertThat(failures).singleElement().satisfies(e -> assertThat(e.getMessage())
                .startsWith("Netty buffer leaks in or before LeakCheckTest$Leaks (expected: none): [ByteBuf")
                .contains("allocateAndDrop"));
    }

    @Test
    void aClassThatReleasesItsBuffersPasses() {
        TestExecutionSummary summary = run(Releases.class);
        assertThat(summary.getTestsSucceededCount()).isEqualTo(1);
        assertThat(summary.getFailures()).isEmpty();
    }

    @Test
    void aLeakIsReportedOnceNotToEveryLaterClass() {
        run(Leaks.class);
        assertThat(run(Releases.class).getFailures()).isEmpty();
    }

    private static TestExecutionSummary run(Class<?> testClass) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(DiscoverySelectors.selectClass(testClass)).build(), listener);
        return listener.getSummary();
    }

    /** Run only through {@link #run}: drops a buffer it allocated. */
    @ExtendWith(LeakCheck.class)
    static class Leaks {
        @Test
        void dropsABuffer() {
            allocateAndDrop();
        }

        private static void allocateAndDrop() {
            ByteBuf leaked = PooledByteBufAllocator.DEFAULT.buffer(32);
            leaked.writeInt(42);
        }
    }

    /** Run only through {@link #run}: releases what it allocates. */
    @ExtendWith(LeakCheck.class)
    static class Releases {
        @Test
        void releasesItsBuffer() {
            ByteBuf kept = PooledByteBufAllocator.DEFAULT.buffer(32);
            kept.writeInt(42);
            assertThat(kept.release()).isTrue();
        }
    }
}
