package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.http.LingeringClose;
import dev.sallyport.proxy.identity.RelayHeader;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The first bytes of a connection to the main listener: a registered sandbox's relay begins every connection it
 * relays with a {@link RelayHeader} carrying the sandbox's token; the connection then is that sandbox's
 * ({@link ClientIdentity#bind}) and goes on as the header says: its explicit proxy connection (the HTTP phase, as
 * it is), a transparent connection to the header's original destination ({@link TransparentRoute}: a CONNECT to it,
 * decided by the sandbox's rules, a synthetic address naming only what this sandbox was given), or its DNS
 * questions ({@link ClientPipeline#toRelayedDns}). A connection that does not begin with the PROXY v2 signature is
 * {@code anonymous} and goes on untouched. Refused, audited and closed: a header that is malformed or carries no
 * token (a process on the host gets no transparent connection and no DNS answer of any identity), a token no
 * registered sandbox has (forged, or of a sandbox whose run ended), and a second PROXY header (v1 or v2) right after
 * the relay's: bytes the sandbox itself sent to pass as another. Removes itself once it has decided.
 */
final class IdentityHeaderHandler extends ByteToMessageDecoder {

    static final String BAD_HEADER = "bad_proxy_header";
    static final String UNKNOWN_IDENTITY = "unknown_identity";
    static final String FORGED_HEADER = "forged_proxy_header";
    private static final byte[] V1 = "PROXY ".getBytes(StandardCharsets.US_ASCII);

    private final ProxyContext context;
    private final ClientPipeline pipeline;
    private final TransparentRoute route;
    private ClientIdentity identity;
    private RelayHeader header;

    IdentityHeaderHandler(ProxyContext context, ClientPipeline pipeline, TransparentRoute route) {
        this.context = context;
        this.pipeline = pipeline;
        this.route = route;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (identity == null) {
            header(ctx, in);
        }
        if (identity != null && !ctx.isRemoved() && ctx.channel().isOpen()) {
            afterHeader(ctx, in);
        }
    }

    private void header(ChannelHandlerContext ctx, ByteBuf in) {
        if (!RelayHeader.mayBegin(in)) {
            ctx.pipeline().remove(this);         // anonymous: the bytes go on as they came
            return;
        }
        RelayHeader header = read(ctx, in, () -> refuse(ctx, BAD_HEADER, null, null));
        if (header == null) {
            return;
        }
        if (header.token().isEmpty()) {
            refuse(ctx, BAD_HEADER, null, header);
            return;
        }
        ClientIdentity found = context.sandboxes().resolve(header.token()).orElse(null);
        if (found == null) {
            refuse(ctx, UNKNOWN_IDENTITY, null, header);
            return;
        }
        found.bind(ctx.channel());
        if (!ConnectionSlot.moveToIdentity(context, ctx.channel())) {
            refuse(ctx, ClientSlots.CONNECTION_LIMIT, found, header);
            return;
        }
        identity = found;
        this.header = header;
        switch (header.kind()) {
            case EXPLICIT -> { }
            case DNS -> pipeline.toRelayedDns(ctx.pipeline(), header.aaaa());
            case TRANSPARENT -> {
                // decided now, as on the transparent listener; the sandbox's first bytes are still checked below
                if (!route.open(ctx, route.audit(ctx), header.destination().getAddress(),
                        header.destination().getPort())) {
                    discard();
                }
            }
        }
    }

    /**
     * The relay's header from {@code in}; null when more bytes are needed (a read is asked for) or when it is
     * malformed ({@code malformed} ran).
     */
    static /* @Nullable */ RelayHeader read(ChannelHandlerContext ctx, ByteBuf in, Runnable malformed) {
        return switch (RelayHeader.read(in)) {
            case RelayHeader.Read.Incomplete _ -> {
                ctx.read();
                yield null;
            }
            case RelayHeader.Read.Malformed _ -> {
                malformed.run();
                yield null;
            }
            case RelayHeader.Read.Complete(RelayHeader h) -> h;
        };
    }

    /** The sandbox's own first bytes: another PROXY header there is an attempt to pass as another client. */
    private void afterHeader(ChannelHandlerContext ctx, ByteBuf in) {
        if (!in.isReadable()) {
            ctx.read();
            return;
        }
        int signature = RelayHeader.mayBegin(in) ? RelayHeader.SIGNATURE_LENGTH
                : RelayHeader.agrees(in, V1) ? V1.length : 0;
        if (signature > 0) {
            if (in.readableBytes() < signature) {
                ctx.read();
                return;
            }
            refuse(ctx, FORGED_HEADER, identity, header);
            return;
        }
        ctx.pipeline().remove(this);
    }

    private void refuse(ChannelHandlerContext ctx, String reason, /* @Nullable */ ClientIdentity who,
                        /* @Nullable */ RelayHeader header) {
        AuditRecord audit = new AuditRecord(context.nextId(), ctx.channel().remoteAddress()).denied(reason);
        if (who != null) {
            audit.identity(who.name());
        }
        if (header != null && header.kind() == RelayHeader.Kind.TRANSPARENT) {
            audit.arrival(TunnelTarget.TRANSPARENT)
                    .target(header.destination().getAddress().getHostAddress(), header.destination().getPort());
        }
        discard();
        if (reason.equals(ClientSlots.CONNECTION_LIMIT) && header != null
                && header.kind() == RelayHeader.Kind.EXPLICIT) {  // the sandbox's client speaks HTTP to the proxy
            audit.status(429);
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
            LingeringClose.respondAndClose(ctx, FrontendInitializer.rawAnswer(ctx.alloc(), 429, reason),
                    ClientPipeline.LINGER);
            return;
        }
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
        ctx.close();
    }

    /** Nothing of a refused client's is decoded further. */
    private void discard() {
        ByteBuf rest = internalBuffer();
        rest.skipBytes(rest.readableBytes());
    }
}
