/**
 * {@code sallyport audit summary}: reads the proxy's JSON Lines audit log back. Start with
 * {@link dev.sallyport.cli.audit.AuditSummary}.
 */
package dev.sallyport.cli.audit;
