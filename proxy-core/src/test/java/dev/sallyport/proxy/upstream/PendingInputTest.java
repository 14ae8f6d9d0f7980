package dev.sallyport.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.internal.Transports;
import dev.sallyport.testing.Prerequisites;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The unread-bytes check on a real loopback socket: quiet until the server sends a byte or closes. */
class PendingInputTest {

    @Test
    void aSocketIsQuietUntilTheServerSendsSomethingOrCloses() throws Exception {
        Prerequisites.require("epoll", Transports.nativeTransport(), "the only transport with a file descriptor");
        EventLoopGroup group = Transports.group(1);
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            for (boolean close : new boolean[] {false, true}) {
                Channel ch = new Bootstrap().group(group).channel(Transports.socketChannel())
                        .option(ChannelOption.AUTO_READ, false).handler(new ChannelInboundHandlerAdapter())
                        .connect(server.getLocalSocketAddress()).sync().channel();
                Socket accepted = server.accept();
                try {
                    assertThat(onLoop(ch, () -> PendingInput.quiet(ch))).isTrue();
                    if (close) {
                        accepted.close();
                    } else {
                        accepted.getOutputStream().write('x');
                        accepted.getOutputStream().flush();
                    }
                    long deadline = System.nanoTime() + 5_000_000_000L;
                    while (onLoop(ch, () -> PendingInput.quiet(ch)) && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    assertThat(onLoop(ch, () -> PendingInput.quiet(ch))).as(close ? "closed" : "a byte waits")
                            .isFalse();
                } finally {
                    accepted.close();
                    ch.close().sync();
                }
            }
        } finally {
            group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    private static boolean onLoop(Channel ch, BooleanSupplier check) throws Exception {
        return ch.eventLoop().submit(check::getAsBoolean).get();
    }
}
