package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.limits.ClientSlots;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * The accept phase of a transparent connection relayed by the sandbox runner: the connection begins with a PROXY
 * protocol v2 header (written by the runner's relay, which read the original destination from the kernel), naming
 * where the client meant to go; {@link TransparentRoute} takes it from there. A header that is not one PROXY v2
 * {@code PROXY} command over TCP with the addresses (and TLVs: a registered sandbox's relay adds its token,
 * {@link IdentityHeaderHandler}), and an unknown token, are audited and closed.
 */
final class OriginalDestinationHandler extends ByteToMessageDecoder {

    static final byte[] SIGNATURE = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
    static final int V2_PROXY = 0x21;
    static final int TCP4 = 0x11;
    static final int TCP6 = 0x21;
    static final String BAD_HEADER = "bad_transparent_header";

    private final TransparentRoute route;

    OriginalDestinationHandler(TransparentRoute route) {
        this.route = route;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 16) {
            if (!agrees(in, SIGNATURE)) {
                refuse(ctx, route.audit(ctx), BAD_HEADER);
            } else {
                ctx.read();
            }
            return;
        }
        AuditRecord audit = route.audit(ctx);
        int start = in.readerIndex();
        int family = in.getUnsignedByte(start + 13);
        int length = in.getUnsignedShort(start + 14);
        int expected = family == TCP4 ? 12 : family == TCP6 ? 36 : -1;
        if (!agrees(in, SIGNATURE) || in.getUnsignedByte(start + 12) != V2_PROXY || expected < 0 || length < expected
                || length > IdentityHeaderHandler.MAX_LENGTH) {
            refuse(ctx, audit, BAD_HEADER);
            return;
        }
        if (in.readableBytes() < 16 + length) {
            ctx.read();
            return;
        }
        String token = IdentityHeaderHandler.token(in, start + 16 + expected, start + 16 + length);
        if (token == null) {
            refuse(ctx, audit, BAD_HEADER);
            return;
        }
        if (!token.isEmpty()) {     // the relay of a registered sandbox: the connection is that sandbox's
            ClientIdentity identity = route.sandboxes().resolve(token).orElse(null);
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
        in.skipBytes(16);
        int size = family == TCP4 ? 4 : 16;
        in.skipBytes(size);                       // the source: the relay's client inside the sandbox
        byte[] dst = new byte[size];
        in.readBytes(dst);
        in.skipBytes(2);
        int port = in.readUnsignedShort();
        in.skipBytes(length - expected);          // the TLVs, read above
        InetAddress address;
        try {
            address = InetAddress.getByAddress(dst);
        } catch (UnknownHostException e) {
            refuse(ctx, audit, BAD_HEADER);
            return;
        }
        if (!route.open(ctx, audit, address, port)) {
            discard();
        }
    }

    /** Whether the readable bytes agree with {@code prefix} as far as both go (a PROXY header's start, so far). */
    static boolean agrees(ByteBuf in, byte[] prefix) {
        int n = Math.min(in.readableBytes(), prefix.length);
        for (int i = 0; i < n; i++) {
            if (in.getByte(in.readerIndex() + i) != prefix[i]) {
                return false;
            }
        }
        return true;
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
