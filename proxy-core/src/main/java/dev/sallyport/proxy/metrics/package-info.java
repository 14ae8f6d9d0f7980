/**
 * Prometheus metrics with the names docs/REFERENCE.md promises, plus JVM and Netty basics, fed by the proxy's
 * events. Start with {@link dev.sallyport.proxy.metrics.ProxyMetrics}.
 */
package dev.sallyport.proxy.metrics;
