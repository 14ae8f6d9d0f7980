package dev.sallyport.proxy.events;

/**
 * Receives every {@link ProxyEvent}. Called on event-loop threads: implementations must not block
 * (the audit writer hands records to its own thread).
 */
@FunctionalInterface
public interface ProxyEventListener {

    void on(ProxyEvent event);

    /** Sends each event to every listener in order. */
    static ProxyEventListener all(ProxyEventListener... listeners) {
        ProxyEventListener[] copy = listeners.clone();
        return event -> {
            for (ProxyEventListener l : copy) {
                l.on(event);
            }
        };
    }
}
