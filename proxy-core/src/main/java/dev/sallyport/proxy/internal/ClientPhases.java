package dev.sallyport.proxy.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import java.util.List;

/**
 * The transitions of a client connection's pipeline that handlers outside its owner ask for (the owner,
 * {@code connect.ClientPipeline}, holds every handler name; nobody else adds or removes handlers). The phases:
 * accept and HTTP, then for an allowed CONNECT the tunnel (TLS check, then interception or passthrough), HTTP
 * again inside an intercepted tunnel, and a raw relay for a passthrough tunnel or an upgraded WebSocket.
 */
public interface ClientPhases {

    /** The tunnel's first bytes are a TLS handshake: the check is done. */
    void tlsChecked(ChannelPipeline pipeline);

    /**
     * A transparent connection's first bytes are not a TLS handshake: HTTP in cleartext, bound to {@code tunnel}'s
     * target ({@link TunnelTarget#asPlainHttp()}), in place of the TLS handlers.
     */
    void toPlainHttp(ChannelPipeline pipeline, TunnelTarget tunnel);

    /** The intercepted handshake completed: HTTP, bound to the tunnel's target and SNI. */
    void toHttp(ChannelPipeline pipeline, TunnelTarget tunnel);

    /** A WebSocket's 101 went out: the HTTP handlers go, {@code inbound} (in order) take their place. */
    Channel toRelay(ChannelPipeline pipeline, List<ChannelHandler> inbound);

    /** The last answer of the connection: written, then the connection lingers a moment and closes. */
    void answerAndClose(Channel channel, Object response);

    /** A passthrough tunnel's upstream is connected: the ClientHello check goes, {@code relay} takes its place. */
    void toPassthroughRelay(ChannelPipeline pipeline, ChannelHandler relay);
}
