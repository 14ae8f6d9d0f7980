package dev.sallyport.proxy.dns;

import dev.sallyport.proxy.identity.ClientIdentity;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DefaultDnsResponse;
import io.netty.handler.codec.dns.DnsQuery;
import io.netty.handler.codec.dns.DnsResponse;
import io.netty.handler.timeout.ReadTimeoutException;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers each decoded query with {@link DnsStub}: over UDP to the datagram's sender, over TCP on the connection
 * (several queries per connection), as the connection's identity (a relayed sandbox's DNS stream on the main
 * listener: {@link DnsServer#relayedStream}). A datagram that does not decode is dropped; a TCP stream that does not is
 * closed. A TCP client whose answers back up (it sends queries and reads nothing) is not read until they drain, so
 * the answers it leaves unread cost the proxy at most the channel's write buffer.
 */
@ChannelHandler.Sharable
final class DnsQueryHandler extends SimpleChannelInboundHandler<DnsQuery> {

    private static final Logger LOGGER = LoggerFactory.getLogger(DnsQueryHandler.class);
    private final DnsStub stub;
    private final boolean datagram;
    private final DnsStub.Families families;

    DnsQueryHandler(DnsStub stub, boolean datagram, DnsStub.Families families) {
        this.stub = stub;
        this.datagram = datagram;
        this.families = families;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DnsQuery query) {
        DnsResponse response;
        InetSocketAddress client;
        if (query instanceof DatagramDnsQuery d) {
            response = new DatagramDnsResponse(d.recipient(), d.sender(), d.id());
            client = d.sender();
        } else {
            response = new DefaultDnsResponse(query.id());
            client = (InetSocketAddress) ctx.channel().remoteAddress();
        }
        stub.answer(query, response, client, ClientIdentity.of(ctx.channel()), families);
        ctx.writeAndFlush(response);
        if (!datagram && !ctx.channel().isWritable()) {
            // a client that does not read its answers is not read either: they would queue here without end
            ctx.channel().config().setAutoRead(false);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (!datagram && ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof ReadTimeoutException) {
            LOGGER.debug("dns: closed a tcp connection that sent no whole query in time client={}",
                    ctx.channel().remoteAddress());
        } else {
            LOGGER.debug("dns: dropped a query that does not decode", cause);
        }
        if (!datagram) {
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
