package dev.sallyport.proxy.dns;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.TcpDnsQueryDecoder;
import io.netty.handler.codec.dns.TcpDnsResponseEncoder;
import io.netty.handler.timeout.ReadTimeoutHandler;
import dev.sallyport.proxy.internal.Transports;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The DNS stub's listeners: UDP and TCP on one address (port 0 picks one port free for both), on the proxy's event
 * loops. Each TCP connection is admitted first as the main listener admits its clients (the caller's {@code admit}:
 * the client's connection slot, refused and closed over its limit), and is closed when no whole query arrived for 10
 * seconds: the bytes of a query that never completes do not keep it open.
 */
public final class DnsServer implements AutoCloseable {

    private static final int IDLE_SECONDS = 10;
    private final Channel udp;
    private final Channel tcp;

    private DnsServer(Channel udp, Channel tcp) {
        this.udp = udp;
        this.tcp = tcp;
    }

    /**
     * Binds both listeners on {@code address}; on failure nothing stays bound. {@code admit} sees each accepted TCP
     * connection first: false, it refused (and closed) it, and nothing of it is read.
     */
    public static DnsServer start(InetSocketAddress address, EventLoopGroup group, DnsStub stub,
                                  Predicate<Channel> admit) throws InterruptedException {
        DnsQueryHandler datagrams = new DnsQueryHandler(stub, true, stub.families());
        DnsQueryHandler streams = new DnsQueryHandler(stub, false, stub.families());
        Channel tcp = new ServerBootstrap().group(group).channel(Transports.serverChannel())
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (admit.test(ch)) {
                            ch.pipeline().addLast(stream(streams));
                        }
                    }
                })
                .bind(address).sync().channel();
        try {
            InetSocketAddress bound = (InetSocketAddress) tcp.localAddress();
            Channel udp = new Bootstrap().group(group)
                    .channel(Transports.nativeTransport() ? EpollDatagramChannel.class : NioDatagramChannel.class)
                    .handler(new ChannelInitializer<DatagramChannel>() {
                        @Override
                        protected void initChannel(DatagramChannel ch) {
                            ch.pipeline().addLast(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(),
                                    datagrams);
                        }
                    })
                    .bind(bound).sync().channel();
            return new DnsServer(udp, tcp);
        } catch (InterruptedException | RuntimeException e) {
            tcp.close().syncUninterruptibly();
            throw e;
        }
    }

    /**
     * The handlers that make the rest of a connection a stream of DNS over TCP answered by {@code stub}: a sandbox's
     * DNS that its relay carries to the main listener behind its identity header, decided as that identity;
     * {@code aaaa}: AAAA questions get synthetic IPv6 answers.
     */
    public static ChannelHandler[] relayedStream(DnsStub stub, boolean aaaa) {
        return stream(new DnsQueryHandler(stub, false, aaaa ? DnsStub.Families.BOTH : DnsStub.Families.IPV4));
    }

    /**
     * DNS over TCP answered by {@code queries}, closed {@value #IDLE_SECONDS} s after it began or after its last
     * whole query: the timeout stands after the decoder, so it sees queries, not bytes.
     */
    private static ChannelHandler[] stream(DnsQueryHandler queries) {
        return new ChannelHandler[] {new TcpDnsQueryDecoder(), new ReadTimeoutHandler(IDLE_SECONDS, TimeUnit.SECONDS),
            new TcpDnsResponseEncoder(), queries};
    }

    /** Where both listeners are bound (the same address and port). */
    public InetSocketAddress address() {
        return (InetSocketAddress) tcp.localAddress();
    }

    @Override
    public void close() {
        udp.close().syncUninterruptibly();
        tcp.close().syncUninterruptibly();
    }
}
