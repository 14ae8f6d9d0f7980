package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.internal.AuditRecord;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * The accept phase of a connection that the host's own nftables redirected to {@code proxy.transparent}: the
 * original destination comes from the kernel ({@link SocketDestination}), not from anything the client sends, and
 * the connection goes on as {@link TransparentRoute} says. A connection the kernel kept no original destination for,
 * or one that was headed for this listener itself (not redirected: a client that dialed it), is refused
 * ({@value #NOT_REDIRECTED}) before any byte is read.
 */
final class KernelDestinationHandler extends ChannelInboundHandlerAdapter {

    static final String NOT_REDIRECTED = "not_redirected";

    private final TransparentRoute route;

    KernelDestinationHandler(TransparentRoute route) {
        this.route = route;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.fireChannelActive();
        AuditRecord audit = route.audit(ctx);
        Optional<InetSocketAddress> original = SocketDestination.of(ctx.channel());
        if (original.isEmpty() || original.get().equals(ctx.channel().localAddress())) {
            original.ifPresent(o -> audit.target(o.getAddress().getHostAddress(), o.getPort()));
            route.refuse(ctx, audit, NOT_REDIRECTED);
            return;
        }
        route.open(ctx, audit, original.get().getAddress(), original.get().getPort());
    }
}
