package dev.sallyport.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

class AwaitTest {

    @Test
    void returnsOnceAnotherThreadMadeTheConditionTrue() {
        AtomicInteger counter = new AtomicInteger();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 1000; i++) {
                counter.incrementAndGet();
            }
        });
        Await.until("the counter reached 1000", Duration.ofSeconds(10), () -> counter.get() == 1000);
        assertThat(Await.value("the writer's end", Duration.ofSeconds(10), () -> writer.isDone() ? "done" : null))
                .isEqualTo("done");
    }

    @Test
    void failsWithWhatItWaitedFor() {
        assertThatThrownBy(() -> Await.until("the gauge reached 0", Duration.ofMillis(20), () -> false))
                .isInstanceOf(AssertionFailedError.class).hasMessage("the gauge reached 0: not within 20 ms");
        assertThatThrownBy(() -> Await.value("a record", Duration.ofSeconds(0), () -> null))
                .isInstanceOf(AssertionFailedError.class).hasMessage("a record: not within 0 s");
    }
}
