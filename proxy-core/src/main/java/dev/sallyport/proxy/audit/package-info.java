/**
 * The audit log: JSON Lines as docs/REFERENCE.md defines them, written off the event loop, failing closed and never
 * dropping a record it took. Start with {@link dev.sallyport.proxy.audit.AuditLog} (admission, queue, lifecycle)
 * and {@link dev.sallyport.proxy.audit.AuditGate} (what the data path asks of it); {@code AuditWriter} is the
 * writer thread (batches, retries), {@code AuditHealth} the failure episodes, {@code FileSink} and
 * {@code StreamSink} the two sinks; {@code AuditRecords} maps events to lines and {@code JsonLine} does the
 * escaping (pure ASCII output, one record per line whatever the input).
 */
package dev.sallyport.proxy.audit;
