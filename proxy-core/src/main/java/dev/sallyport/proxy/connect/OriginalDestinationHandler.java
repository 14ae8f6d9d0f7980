package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.identity.RelayHeader;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * The accept phase of a transparent connection relayed by the sandbox runner to its run's own proxy: the connection
 * begins with a {@link RelayHeader} of the transparent kind (written by the runner's relay, which read the original
 * destination from the kernel), naming where the client meant to go; {@link TransparentRoute} takes it from there. Any
 * other header, and an unknown token, are audited and closed.
 */
final class OriginalDestinationHandler extends ByteToMessageDecoder {

    static final String BAD_HEADER = "bad_transparent_header";

    private final TransparentRoute route;

    OriginalDestinationHandler(TransparentRoute route) {
        this.route = route;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        RelayHeader header = IdentityHeaderHandler.read(ctx, in, () -> refuse(ctx, route.audit(ctx), BAD_HEADER));
        if (header == null) {
            return;
        }
        AuditRecord audit = route.audit(ctx);
        if (header.kind() != RelayHeader.Kind.TRANSPARENT) {
            refuse(ctx, audit, BAD_HEADER);
            return;
        }
        if (!header.token().isEmpty()) {     // the relay of a registered sandbox: the connection is that sandbox's
            ClientIdentity identity = route.sandboxes().resolve(header.token()).orElse(null);
            if (identity == null) {
                refuse(ctx, audit, IdentityHeaderHandler.UNKNOWN_IDENTITY);
                return;
            }
            identity.bind(ctx.channel());
            if (!route.countAgainstIdentity(ctx)) {
                audit.identity(identity.name());
                refuse(ctx, audit, ClientSlots.CONNECTION_LIMIT);
                return;
            }
        }
        if (!route.open(ctx, audit, header.destination().getAddress(), header.destination().getPort())) {
            discard();
        }
    }

    private void refuse(ChannelHandlerContext ctx, AuditRecord audit, String reason) {
        route.refuse(ctx, audit, reason);
        discard();
    }

    /** Nothing of a refused client's is decoded further. */
    private void discard() {
        ByteBuf rest = internalBuffer();
        rest.skipBytes(rest.readableBytes());
    }
}
