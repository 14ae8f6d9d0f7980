package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.http.LingeringClose;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The first bytes of a connection to the main listener: a sandbox runner's relay begins every connection it relays
 * with a PROXY v2 header ({@code LOCAL}, no addresses) whose TLV {@link SandboxRegistry#TLV_TYPE} carries the
 * sandbox's token; the connection then is that sandbox's ({@link ClientIdentity#bind}). A connection that does not
 * begin with the PROXY v2 signature is {@code anonymous} and goes on untouched. Refused, audited and closed: a
 * header that is malformed or carries no token, a token no registered sandbox has (forged, or of a sandbox whose
 * run ended), and a second PROXY header (v1 or v2) right after the relay's: bytes the sandbox itself sent to pass
 * as another. Removes itself once it has decided.
 */
final class IdentityHeaderHandler extends ByteToMessageDecoder {

    static final String BAD_HEADER = "bad_proxy_header";
    static final String UNKNOWN_IDENTITY = "unknown_identity";
    static final String FORGED_HEADER = "forged_proxy_header";
    /** More than any header the relay writes: addresses of the largest family and one token. */
    static final int MAX_LENGTH = 512;
    private static final byte[] V1 = "PROXY ".getBytes(StandardCharsets.US_ASCII);

    private final ProxyContext context;
    private ClientIdentity identity;

    IdentityHeaderHandler(ProxyContext context) {
        this.context = context;
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
        if (!OriginalDestinationHandler.agrees(in, OriginalDestinationHandler.SIGNATURE)) {
            ctx.pipeline().remove(this);         // anonymous: the bytes go on as they came
            return;
        }
        if (in.readableBytes() < 16) {
            ctx.read();
            return;
        }
        int start = in.readerIndex();
        int command = in.getUnsignedByte(start + 12);
        int length = in.getUnsignedShort(start + 14);
        int addresses = addressBytes(in.getUnsignedByte(start + 13));
        if ((command != 0x20 && command != OriginalDestinationHandler.V2_PROXY) || addresses < 0
                || length < addresses || length > MAX_LENGTH) {
            refuse(ctx, BAD_HEADER, null);
            return;
        }
        if (in.readableBytes() < 16 + length) {
            ctx.read();
            return;
        }
        String token = token(in, start + 16 + addresses, start + 16 + length);
        if (token == null || token.isEmpty()) {
            refuse(ctx, BAD_HEADER, null);
            return;
        }
        ClientIdentity found = context.sandboxes().resolve(token).orElse(null);
        if (found == null) {
            refuse(ctx, UNKNOWN_IDENTITY, null);
            return;
        }
        in.skipBytes(16 + length);
        found.bind(ctx.channel());
        if (!ConnectionSlot.moveToIdentity(context, ctx.channel())) {
            refuse(ctx, ClientSlots.CONNECTION_LIMIT, found);
            return;
        }
        identity = found;
    }

    /** The sandbox's own first bytes: another PROXY header there is an attempt to pass as another client. */
    private void afterHeader(ChannelHandlerContext ctx, ByteBuf in) {
        if (!in.isReadable()) {
            ctx.read();
            return;
        }
        byte[] looksLike = in.getByte(in.readerIndex()) == OriginalDestinationHandler.SIGNATURE[0]
                ? OriginalDestinationHandler.SIGNATURE : in.getByte(in.readerIndex()) == V1[0] ? V1 : null;
        if (looksLike != null) {
            if (OriginalDestinationHandler.agrees(in, looksLike)) {
                if (in.readableBytes() < looksLike.length) {
                    ctx.read();
                    return;
                }
                refuse(ctx, FORGED_HEADER, identity);
                return;
            }
        }
        ctx.pipeline().remove(this);
    }

    /** The size of the address block of a PROXY v2 family byte: UNSPEC, TCP/UDP over IPv4 or IPv6, UNIX; else -1. */
    static int addressBytes(int family) {
        return switch (family >> 4) {
            case 0 -> 0;
            case 1 -> 12;
            case 2 -> 36;
            case 3 -> 216;
            default -> -1;
        };
    }

    /**
     * The token of the TLVs between {@code from} and {@code to}: the value of the one TLV of type
     * {@link SandboxRegistry#TLV_TYPE}, empty when there is none; null when the TLVs do not fill the range exactly
     * (one cut short, one longer than the header) or there is more than one token.
     */
    static String token(ByteBuf in, int from, int to) {
        String token = "";
        int at = from;
        while (at < to) {
            int length = at + 3 > to ? -1 : in.getUnsignedShort(at + 1);
            if (length < 0 || at + 3 + length > to) {
                return null;
            }
            if (in.getUnsignedByte(at) == SandboxRegistry.TLV_TYPE) {
                if (!token.isEmpty()) {
                    return null;
                }
                token = in.toString(at + 3, length, StandardCharsets.US_ASCII);
            }
            at += 3 + length;
        }
        return token;
    }

    private void refuse(ChannelHandlerContext ctx, String reason, /* @Nullable */ ClientIdentity who) {
        AuditRecord audit = new AuditRecord(context.nextId(), ctx.channel().remoteAddress()).denied(reason);
        if (who != null) {
            audit.identity(who.name());
        }
        ByteBuf rest = internalBuffer();
        rest.skipBytes(rest.readableBytes());
        if (reason.equals(ClientSlots.CONNECTION_LIMIT)) {     // the sandbox's client speaks HTTP to the proxy: tell it
            audit.status(429);
            context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
            LingeringClose.respondAndClose(ctx, FrontendInitializer.rawAnswer(ctx.alloc(), 429, reason),
                    ClientPipeline.LINGER);
            return;
        }
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connection", audit.fields()));
        ctx.close();
    }
}
