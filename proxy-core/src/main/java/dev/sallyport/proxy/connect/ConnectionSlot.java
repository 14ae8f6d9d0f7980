package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.limits.Admission;
import dev.sallyport.proxy.limits.ClientKey;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * The per-client connection slot a client connection holds ({@code max_connections_per_client}). It is taken when
 * the connection is accepted, against the source address (all that is known then), and moves to the connection's
 * sandbox once its identity header names one: every relayed sandbox connects from the host's loopback, and counted
 * by address one sandbox could hold the slots of all. Anonymous clients stay counted by address. The slot held
 * is given back when the connection closes, whichever key it is counted against by then. The DNS stub's own TCP
 * listener takes the same slot ({@link #admitWithoutAnswer}). Used on the channel's event loop only.
 */
public final class ConnectionSlot {

    /** The reason of a connection refused because the proxy holds {@code max_connections}. */
    static final String PROXY_LIMIT = "too_many_connections";

    private static final AttributeKey<ClientKey> HELD = AttributeKey.valueOf("sallyport.connectionSlot");

    private ConnectionSlot() {
    }

    /** Takes the slot of a new connection (by its address); admitted, it is given back when the channel closes. */
    static Admission open(ProxyContext context, Channel ch) {
        ClientKey client = ClientKey.of(ch.remoteAddress());
        Admission admission = context.tryOpenConnection(client);
        if (admission == Admission.ADMITTED) {
            ch.attr(HELD).set(client);
            ch.closeFuture().addListener(f -> context.connectionClosed(ch.attr(HELD).get()));
        }
        return admission;
    }

    /** The audited reason of a connection {@code admission} refuses. */
    static String reason(Admission admission) {
        return switch (admission) {
            case CLIENT_LIMIT -> ClientSlots.CONNECTION_LIMIT;
            case PROXY_LIMIT -> PROXY_LIMIT;
            case ADMITTED -> throw new IllegalArgumentException("admission: admitted (expected: a refusal)");
        };
    }

    /** An admitted connection: among the proxy's open ones (closed at shutdown, counted in the metrics). */
    static void track(ProxyContext context, Channel ch) {
        context.channels().add(ch);
        context.emit(new ProxyEvent.ConnectionOpened(context.clock().instant()));
        ch.closeFuture().addListener(f -> context.emit(new ProxyEvent.ConnectionClosed(context.clock().instant())));
    }

    /**
     * A new connection to a listener that speaks no HTTP (the DNS stub's TCP listener), admitted as the main
     * listener admits its own: its slot taken ({@link #open}) and tracked; false when refused over a limit, audited
     * ({@code connection}, the main listener's reasons), closed with nothing answered (DNS has no way to say why).
     */
    public static boolean admitWithoutAnswer(ProxyContext context, Channel ch) {
        Admission admission = open(context, ch);
        if (admission != Admission.ADMITTED) {
            AuditRecord audit = new AuditRecord(context.nextId(), ch.remoteAddress()).denied(reason(admission));
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
            ch.close();
            return false;
        }
        track(context, ch);
        return true;
    }

    /**
     * After the channel was bound to its identity: counts it against that sandbox instead of its address. False
     * (still counted by address) when the sandbox already holds its limit: the caller refuses the connection.
     */
    static boolean moveToIdentity(ProxyContext context, Channel ch) {
        ClientKey from = ch.attr(HELD).get();
        ClientKey to = ClientIdentity.limitKey(ch);
        if (from == null || from.equals(to)) {
            return true;
        }
        if (!context.moveConnection(from, to)) {
            return false;
        }
        ch.attr(HELD).set(to);
        return true;
    }
}
