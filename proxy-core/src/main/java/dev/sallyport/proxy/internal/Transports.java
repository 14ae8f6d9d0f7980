package dev.sallyport.proxy.internal;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/** Native epoll where the kernel offers it, NIO otherwise; BoringSSL where it loads, JDK TLS otherwise. */
public final class Transports {

    private Transports() {}

    public static boolean nativeTransport() {
        return Epoll.isAvailable();
    }

    public static EventLoopGroup group(int threads) {
        IoHandlerFactory factory = nativeTransport() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, factory);
    }

    public static Class<? extends ServerChannel> serverChannel() {
        return nativeTransport() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends SocketChannel> socketChannel() {
        return nativeTransport() ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static SslProvider sslProvider() {
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }
}
