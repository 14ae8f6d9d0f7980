package dev.sallyport.proxy.audit;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;

/**
 * The audit log as the data path sees it. A request or tunnel is forwarded only after {@link #admit} took its
 * decision record; records given to {@link #on} afterwards (the end of that exchange or tunnel) are kept too.
 */
public interface AuditGate extends ProxyEventListener {

    /** False while the log refuses new requests (a failing sink, a full queue, closed). */
    boolean accepting();

    /**
     * Takes the decision record of something about to be forwarded, or refuses it (false: do not forward).
     * A record taken is written, if the sink fails then once it recovers; it is lost only if the process ends
     * first. Never blocks.
     */
    boolean admit(ProxyEvent decision);
}
