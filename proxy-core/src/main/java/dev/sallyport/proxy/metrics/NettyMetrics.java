package dev.sallyport.proxy.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;

/** Netty basics: memory held by the pooled and the default allocator, and Netty's direct memory counter. */
final class NettyMetrics {

    /** Prometheus text format 0.0.4, what the admin listener serves. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private NettyMetrics() {}

    @SuppressWarnings("ReferenceEquality")   // is the default allocator another instance than the pooled one?
    static void bindTo(MeterRegistry registry) {
        new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(registry);
        if (ByteBufAllocator.DEFAULT != PooledByteBufAllocator.DEFAULT
                && ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider provider) {
            new NettyAllocatorMetrics(provider).bindTo(registry);
        }
        Gauge.builder("netty.direct.memory.used", PlatformDependent::usedDirectMemory)
                .description("Direct memory Netty has reserved (-1 when not tracked)").baseUnit("bytes")
                .register(registry);
        Gauge.builder("netty.direct.memory.max", PlatformDependent::maxDirectMemory)
                .description("Direct memory limit Netty observes").baseUnit("bytes").register(registry);
    }
}
