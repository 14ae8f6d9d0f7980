package dev.sallyport.benchmarks.peers;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;

/** Sends CONNECT, waits for the proxy's 200, installs TLS behind itself and removes itself. */
final class TunnelHandler extends ChannelInboundHandlerAdapter {

    private static final int MAX_REPLY = 8192;

    private final ClientInitializer initializer;
    private final String host;
    private final int port;
    private final Slot slot;
    private ByteBuf reply;

    TunnelHandler(ClientInitializer initializer, String host, int port, Slot slot) {
        this.initializer = initializer;
        this.host = host;
        this.port = port;
        this.slot = slot;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        reply = ctx.alloc().buffer(256);
        String connect = "CONNECT " + host + ":" + port + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n\r\n";
        ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), connect));
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            reply.writeBytes(in);
        } finally {
            in.release();
        }
        int end = headerEnd(reply);
        if (end < 0) {
            if (reply.readableBytes() > MAX_REPLY) {
                fail(ctx, "reply header too long");
            }
            return;
        }
        String head = reply.toString(0, end, StandardCharsets.US_ASCII);
        if (!head.startsWith("HTTP/1.1 200") && !head.startsWith("HTTP/1.0 200")) {
            fail(ctx, head.lines().findFirst().orElse(""));
            return;
        }
        reply.readerIndex(end + 4);
        ByteBuf rest = reply.readableBytes() > 0 ? reply.retainedSlice() : null;
        reply.release();
        reply = null;
        initializer.addTls(ctx.pipeline(), ctx.name());
        ctx.pipeline().remove(this);
        if (rest != null) {
            ctx.pipeline().fireChannelRead(rest);
        }
    }

    /** Index of the blank line's CR in {@code buf}, or -1. */
    private static int headerEnd(ByteBuf buf) {
        for (int i = buf.readerIndex(); i + 3 < buf.writerIndex(); i++) {
            if (buf.getByte(i) == '\r' && buf.getByte(i + 1) == '\n' && buf.getByte(i + 2) == '\r'
                    && buf.getByte(i + 3) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private void fail(ChannelHandlerContext ctx, String why) {
        if (slot.errors == 0) {
            System.err.println("loadgen: CONNECT " + host + ":" + port + " refused: " + why);
        }
        slot.failed();
        ctx.close();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (reply != null) {
            reply.release();
            reply = null;
        }
    }
}
