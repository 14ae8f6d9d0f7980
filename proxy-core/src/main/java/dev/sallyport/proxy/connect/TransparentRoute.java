package dev.sallyport.proxy.connect;

import dev.sallyport.policy.TlsMode;
import dev.sallyport.proxy.dns.SyntheticAddresses;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.internal.AuditRecord;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.internal.TunnelTarget;
import io.netty.channel.ChannelHandlerContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * What a transparent connection becomes once its original destination is known, however it was learned (a PROXY v2
 * header, {@link OriginalDestinationHandler}; the kernel's connection tracking, {@link KernelDestinationHandler}): a
 * synthetic address ({@link SyntheticAddresses}) stands for the name the DNS stub gave this client (a registered
 * sandbox: that identity, whose mappings no other client can use; else the client's address); any other address
 * is its IP literal. Then it is exactly a CONNECT to {@code name:port} answered 200: the tunnel phase (SNI must name
 * the host; intercept or passthrough by the policy). A synthetic address that names nothing for this client and a
 * refused target are audited and closed; nothing of the client's goes anywhere.
 */
final class TransparentRoute {

    /** The reason of a synthetic address that names nothing (never given out, or its mapping expired). */
    static final String UNKNOWN_SYNTHETIC = "unknown_synthetic_address";

    private final ProxyContext context;
    private final ClientPipeline pipeline;
    private final SyntheticAddresses addresses;
    private final TunnelOpener opener;

    TransparentRoute(ProxyContext context, ClientPipeline pipeline, SyntheticAddresses addresses, ByteCounter counter) {
        this.context = context;
        this.pipeline = pipeline;
        this.addresses = addresses;
        this.opener = new TunnelOpener(context, counter);
    }

    /** The sandboxes registered with the proxy, whose relays name them by a token in the PROXY header. */
    SandboxRegistry sandboxes() {
        return context.sandboxes();
    }

    /** After the connection was bound to its sandbox: false when that sandbox holds its connection limit. */
    boolean countAgainstIdentity(ChannelHandlerContext ctx) {
        return ConnectionSlot.moveToIdentity(context, ctx.channel());
    }

    /** A fresh record of a transparent connection. */
    AuditRecord audit(ChannelHandlerContext ctx) {
        return new AuditRecord(context.nextId(), ctx.channel().remoteAddress()).arrival(TunnelTarget.TRANSPARENT);
    }

    /** Opens the tunnel toward {@code address:port} (true), or refuses and closes the connection (false). */
    boolean open(ChannelHandlerContext ctx, AuditRecord audit, InetAddress address, int port) {
        String host;
        if (SyntheticAddresses.isSynthetic(address)) {
            ClientIdentity identity = ClientIdentity.of(ctx.channel());
            host = (identity == ClientIdentity.ANONYMOUS
                    ? addresses.nameFor(address, ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress())
                    : addresses.nameFor(address, identity)).orElse(null);
            if (host == null) {
                audit.target(address.getHostAddress(), port).identity(identity.name());
                refuse(ctx, audit, UNKNOWN_SYNTHETIC);
                return false;
            }
        } else {
            host = address.getHostAddress();
        }
        TunnelTarget tunnel = opener.open(ctx, host, port, TunnelTarget.TRANSPARENT, audit,
                (status, reason) -> refuse(ctx, audit, reason));
        if (tunnel == null) {
            return false;
        }
        pipeline.transparentToTunnel(ctx.pipeline(), tunnel, tunnel.decision().tls() == TlsMode.PASSTHROUGH);
        ctx.channel().read();
        return true;
    }

    /** Records the refusal ({@code reason} unless the record already says why) and closes the connection. */
    void refuse(ChannelHandlerContext ctx, AuditRecord audit, String reason) {
        if (audit.decision() == null) {
            audit.denied(reason);
        }
        context.emit(new ProxyEvent.Decided(context.clock().instant(), "connect", audit.fields()));
        ctx.close();
    }
}
