package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.limits.Admission;
import dev.sallyport.proxy.limits.ClientKey;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * The per-client connection slot a client connection holds ({@code max_connections_per_client}). It is taken when
 * the connection is accepted, against the source address (all that is known then), and moves to the connection's
 * sandbox once its identity header names one: every relayed sandbox connects from the host's loopback, and counted
 * by address one sandbox could hold the slots of all. Anonymous clients stay counted by address. The slot held
 * is given back when the connection closes, whichever key it is counted against by then. Used on the channel's
 * event loop only.
 */
final class ConnectionSlot {

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
