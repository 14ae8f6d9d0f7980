package dev.sallyport.proxy.audit;

/**
 * Told when the audit log loses records or stops accepting them. {@code ProxyMetrics} implements it
 * ({@code sallyport_audit_dropped_total}); the audit log itself prints the stderr line, once per episode.
 * Methods are called from the writer thread or, for a full queue, from the event loop: they must not block.
 */
public interface AuditFailureListener {

    /** A failure episode began: message is the one line also printed on stderr. Once per episode. */
    void failed(String message);

    /** This many records were lost (queue full, write failed, or sent after close). May repeat in an episode. */
    default void dropped(long records) {}

    /** Records are being written again; the episode is over. */
    void recovered();

    /** Ignores everything (tests, tools that only read). */
    AuditFailureListener NONE = new AuditFailureListener() {
        @Override
        public void failed(String message) {}

        @Override
        public void recovered() {}
    };
}
