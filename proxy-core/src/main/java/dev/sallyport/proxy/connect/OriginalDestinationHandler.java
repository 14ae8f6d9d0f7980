package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.policy.TlsMode;
import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.limits.ClientKey;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * The accept phase of a transparent connection: the connection begins with a PROXY protocol v2 header (written by
 * whoever captured it: the sandbox runner's relay, which read the original destination from the kernel), naming
 * where the client meant to go. A synthetic address ({@link SyntheticAddresses}) stands for the name the DNS stub
 * gave it; any other address is its IP literal. The connection then is exactly a CONNECT to {@code name:port} that
 * was answered 200: the tunnel phase (SNI must name the host; intercept or passthrough by the policy). A header that
 * is not one PROXY v2 {@code PROXY} command over TCP with the addresses (and TLVs: a registered sandbox's relay adds
 * its token, {@link IdentityHeaderHandler}), an unknown token, an address whose mapping expired, and a refused target
 * are audited and closed; nothing of the client's goes anywhere.
 */
final class OriginalDestinationHandler extends ByteToMessageDecoder {

    static final byte[] SIGNATURE = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
    static final int V2_PROXY = 0x21;
    static final int TCP4 = 0x11;
    static final int TCP6 = 0x21;
    /** The reason of a synthetic address that names nothing (never given out, or its mapping expired). */
    static final String UNKNOWN_SYNTHETIC = "unknown_synthetic_address";
    static final String BAD_HEADER = "bad_transparent_header";

    private final ProxyContext context;
    private final ClientPipeline pipeline;
    private final SyntheticAddresses addresses;
    private final TunnelOpener opener;

    OriginalDestinationHandler(ProxyContext context, ClientPipeline pipeline, SyntheticAddresses addresses,
                               ByteCounter counter, ClientKey client) {
        this.context = context;
        this.pipeline = pipeline;
        this.addresses = addresses;
        this.opener = new TunnelOpener(context, counter, client);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 16) {
            if (!prefixMatches(in)) {
                refuse(ctx, new AuditRecord(context.nextId(), ctx.channel().remoteAddress()), BAD_HEADER);
            } else {
                ctx.read();
            }
            return;
        }
        AuditRecord audit = new AuditRecord(context.nextId(), ctx.channel().remoteAddress())
                .arrival(TunnelTarget.TRANSPARENT);
        int start = in.readerIndex();
        int family = in.getUnsignedByte(start + 13);
        int length = in.getUnsignedShort(start + 14);
        int expected = family == TCP4 ? 12 : family == TCP6 ? 36 : -1;
        if (!prefixMatches(in) || in.getUnsignedByte(start + 12) != V2_PROXY || expected < 0 || length < expected
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
            ClientIdentity identity = context.sandboxes().resolve(token).orElse(null);
            if (identity == null) {
                refuse(ctx, audit, IdentityHeaderHandler.UNKNOWN_IDENTITY);
                return;
            }
            identity.bind(ctx.channel());
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
        String host;
        if (SyntheticAddresses.isSynthetic(address)) {
            host = addresses.nameFor(address).orElse(null);
            if (host == null) {
                audit.target(address.getHostAddress(), port);
                refuse(ctx, audit, UNKNOWN_SYNTHETIC);
                return;
            }
        } else {
            host = address.getHostAddress();
        }
        TunnelTarget tunnel = opener.open(ctx, host, port, TunnelTarget.TRANSPARENT, audit,
                (status, reason) -> refuse(ctx, audit, reason));
        if (tunnel == null) {
            return;
        }
        pipeline.transparentToTunnel(ctx.pipeline(), tunnel, tunnel.decision().tls() == TlsMode.PASSTHROUGH);
        ctx.channel().read();
    }

    private static boolean prefixMatches(ByteBuf in) {
        int n = Math.min(in.readableBytes(), SIGNATURE.length);
        for (int i = 0; i < n; i++) {
            if (in.getByte(in.readerIndex() + i) != SIGNATURE[i]) {
                return false;
            }
        }
        return true;
    }

    private void refuse(ChannelHandlerContext ctx, AuditRecord audit, String reason) {
        if (audit.decision() == null) {
            audit.denied(reason);
        }
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connect", audit.fields()));
        ByteBuf rest = internalBuffer();
        rest.skipBytes(rest.readableBytes());
        ctx.close();
    }
}
