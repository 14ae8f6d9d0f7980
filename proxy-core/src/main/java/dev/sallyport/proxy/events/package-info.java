/**
 * The typed events the data path emits. Audit and metrics both listen here; neither parses log lines.
 * Start with {@link dev.sallyport.proxy.events.ProxyEvent}.
 */
package dev.sallyport.proxy.events;
