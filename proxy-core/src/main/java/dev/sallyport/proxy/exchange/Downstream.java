package dev.sallyport.proxy.exchange;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.HttpObject;

/**
 * The client side of one exchange, as its front end offers it to the core. The core writes the response through it
 * (already scrubbed, hop-by-hop fields removed, framed by {@code Content-Length} or the chunked flag in Netty's HTTP
 * objects) and says when the exchange is over; the front end turns that into its protocol and manages its
 * connection. All calls come on the front end's event loop.
 */
public interface Downstream {

    /** The client's channel (its event loop runs the exchange; its allocator and writability are used). */
    Channel channel();

    /**
     * Sends a part of the response: an interim or final head, a body part, or the last part. With {@code flush}
     * false, the part may wait for {@link #flush()} so that a head and the body of the same upstream read leave
     * together.
     */
    ChannelFuture send(HttpObject part, boolean flush);

    void flush();

    /**
     * Asks for the next part of the request body (the core has forwarded what it had). A front end hands every part
     * to {@link Exchange#requestBody}, and always a last one ({@code LastHttpContent}), empty for a bodiless request.
     */
    void readRequestBody();

    /**
     * The core refused the request before any response head: answer {@code status} with the reason (and the one
     * line {@code detail}, may be null). {@code keepOpen}: the request was complete and the connection may serve
     * another one.
     */
    void refuse(int status, String reason, String detail, boolean keepOpen);

    /** The response cannot be completed after its head went out: end the client connection. */
    void abort();

    /** The exchange is recorded and over; {@code keepOpen}: the connection may carry another request. */
    void ended(boolean keepOpen);

    /**
     * The upstream accepted a WebSocket upgrade and the {@code 101} went out: take this protocol's handlers off the
     * client channel, put {@code inbound} (in order) in their place so it carries raw frames, and return the
     * channel. A front end that cannot hand its connection over (an HTTP/2 stream) refuses WebSocket requests before
     * they reach the core.
     */
    Channel becomeRelay(java.util.List<io.netty.channel.ChannelHandler> inbound);
}
