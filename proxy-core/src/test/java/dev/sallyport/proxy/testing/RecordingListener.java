package dev.sallyport.proxy.testing;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** Collects every event; tests wait for the one they expect with a deadline. */
public final class RecordingListener implements ProxyEventListener {

    public final List<ProxyEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void on(ProxyEvent event) {
        events.add(event);
    }

    public AuditFields await(String kind, Predicate<AuditFields> match) {
        return Await.value(() -> "a matching " + kind + " event (got " + events + ")", Duration.ofSeconds(10), () -> {
            for (ProxyEvent e : events) {
                AuditFields f = fields(e, kind);
                if (f != null && match.test(f)) {
                    return f;
                }
            }
            return null;
        });
    }

    public List<AuditFields> all(String kind) {
        return events.stream().map(e -> fields(e, kind)).filter(f -> f != null).toList();
    }

    /** kind: "connect", "request", "tunnel" (Decided by event name), "exchange", "tunnel_end", "websocket_end". */
    private static AuditFields fields(ProxyEvent e, String kind) {
        return switch (e) {
            case ProxyEvent.Decided d when d.event().equals(kind) -> d.fields();
            case ProxyEvent.ExchangeCompleted c when kind.equals("exchange") -> c.fields();
            case ProxyEvent.VersionRefused v when kind.equals("registry") -> v.fields();
            case ProxyEvent.TunnelEnded t when t.event().equals(kind) -> t.fields();
            default -> null;
        };
    }
}
