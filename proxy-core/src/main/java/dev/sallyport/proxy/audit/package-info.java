/**
 * The audit log: JSON Lines as CONTRACT.md defines them, written off the event loop, failing closed.
 * Start with {@link dev.sallyport.proxy.audit.AuditLog}; {@code AuditRecords} maps events to lines and
 * {@code JsonLine} does the escaping (pure ASCII output, one record per line whatever the input).
 */
package dev.sallyport.proxy.audit;
