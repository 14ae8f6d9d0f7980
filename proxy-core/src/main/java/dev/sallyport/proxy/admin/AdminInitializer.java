package dev.sallyport.proxy.admin;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;

/** The admin pipeline: small HTTP/1.1 limits, whole requests (256 KiB at most), idle connections closed. */
final class AdminInitializer extends ChannelInitializer<SocketChannel> {

    static final int MAX_CONTENT = 256 * 1024;     // a sandbox's registration carries its policy file
    static final int IDLE_SECONDS = 30;

    private final AdminHandler handler;

    AdminInitializer(AdminHandler handler) {
        this.handler = handler;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ch.pipeline()
                .addLast("idle", new IdleStateHandler(0, 0, IDLE_SECONDS, TimeUnit.SECONDS))
                .addLast("http", new HttpServerCodec(new HttpDecoderConfig()
                        .setMaxInitialLineLength(4096).setMaxHeaderSize(8192)))
                .addLast("aggregate", new HttpObjectAggregator(MAX_CONTENT))
                .addLast("admin", handler);
    }
}
