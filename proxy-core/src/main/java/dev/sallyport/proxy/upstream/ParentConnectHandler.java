package dev.sallyport.proxy.upstream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The first handler of a connection to the parent proxy: sends {@code CONNECT host:port} (with
 * {@code Proxy-Authorization} when credentials are configured), reads the parent's response head, and on a
 * {@code 2xx} removes itself and adds the destination's own layers (TLS, HTTP codec) through {@code layers}: from
 * then on the connection is a tunnel to the destination, as if dialed directly. Anything else fails
 * {@code tunnel} with an {@link UpstreamFailure} naming the parent and what it said, and closes the connection.
 */
final class ParentConnectHandler extends ChannelInboundHandlerAdapter {

    /** The parent answered 407: credentials missing or refused. */
    static final String AUTH = "upstream_proxy_auth";
    /** The parent answered CONNECT with another status than 2xx (it refuses the destination). */
    static final String REFUSED = "upstream_proxy_refused";
    /** The parent could not be connected to. */
    static final String CONNECT_FAILED = "upstream_proxy_connect_failed";
    /** The parent did not accept the connection, or did not answer CONNECT, within {@code timeouts.connect}. */
    static final String TIMEOUT = "upstream_proxy_timeout";
    /** The parent closed the connection or answered something that is not an HTTP response head. */
    static final String FAILED = "upstream_proxy_failed";

    private static final int MAX_HEAD = 16 * 1024;
    private static final ByteBuf CRLFCRLF = Unpooled.unreleasableBuffer(
            Unpooled.copiedBuffer("\r\n\r\n", StandardCharsets.US_ASCII)).asReadOnly();

    private final String target;
    private final String authorization;     // nullable
    private final String parent;            // the parent as errors name it, host:port (address)
    private final String ip;
    private final long timeoutMillis;
    private final Consumer<ChannelHandlerContext> layers;
    private final Promise<Void> tunnel;
    private ByteBuf head;
    private ScheduledFuture<?> deadline;

    ParentConnectHandler(String target, String authorization, String parent, String ip, long timeoutMillis,
                         Consumer<ChannelHandlerContext> layers, Promise<Void> tunnel) {
        this.target = target;
        this.authorization = authorization;
        this.parent = parent;
        this.ip = ip;
        this.timeoutMillis = timeoutMillis;
        this.layers = layers;
        this.tunnel = tunnel;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        head = ctx.alloc().buffer(256);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (deadline != null) {
            deadline.cancel(false);
        }
        head.release();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        String request = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
                + (authorization == null ? "" : "Proxy-Authorization: " + authorization + "\r\n") + "\r\n";
        ctx.writeAndFlush(ctx.alloc().buffer(request.length()).writeBytes(request.getBytes(StandardCharsets.US_ASCII)))
                .addListener(f -> {
                    if (!f.isSuccess()) {
                        fail(ctx, FAILED, 502, "sending CONNECT failed: " + UpstreamConnector.rootMessage(f.cause()));
                    }
                });
        deadline = ctx.executor().schedule(() -> fail(ctx, TIMEOUT, 504, "no answer to CONNECT within "
                + timeoutMillis + " ms"), timeoutMillis, TimeUnit.MILLISECONDS);
        ctx.read();
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            if (tunnel.isDone()) {
                return;
            }
            head.writeBytes(in);
        } finally {
            in.release();
        }
        int at = ByteBufUtil.indexOf(CRLFCRLF, head);
        if (at < 0 && head.readableBytes() > MAX_HEAD) {
            fail(ctx, FAILED, 502, "response head to CONNECT is over " + MAX_HEAD + " bytes");
        } else if (at < 0) {
            ctx.read();
        } else {
            boolean more = head.readableBytes() > at + CRLFCRLF.readableBytes();   // a refusal's page, say
            answered(ctx, head.toString(head.readerIndex(), at - head.readerIndex(), StandardCharsets.ISO_8859_1),
                    more);
        }
    }

    private void answered(ChannelHandlerContext ctx, String text, boolean more) {
        String statusLine = text.lines().findFirst().orElse("");
        String[] parts = statusLine.split(" ", 3);
        int status = parts.length >= 2 && parts[0].startsWith("HTTP/1.") && parts[1].matches("[0-9]{3}")
                ? Integer.parseInt(parts[1]) : -1;
        if (status < 0) {
            fail(ctx, FAILED, 502, "answered CONNECT with '" + printable(statusLine) + "' (expected: an HTTP/1.1"
                    + " status line)");
        } else if (status == 407) {
            fail(ctx, AUTH, 502, "asks for credentials (407" + (parts.length > 2 ? " " + printable(parts[2]) : "")
                    + ") " + (authorization == null ? "and upstream.proxy.credentials names none"
                    : "and refused those of upstream.proxy.credentials"));
        } else if (status / 100 != 2) {
            fail(ctx, REFUSED, 502, "refused CONNECT " + target + " (" + printable(statusLine.substring(
                    statusLine.indexOf(' ') + 1)) + ")");
        } else if (more) {
            // the destination spoke before the client: those bytes would have nobody to go to
            fail(ctx, FAILED, 502, "sent bytes after its 2xx to CONNECT, before anything was sent");
        } else {
            deadline.cancel(false);
            layers.accept(ctx);
            ctx.pipeline().remove(this);
            tunnel.trySuccess(null);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        fail(ctx, FAILED, 502, "closed the connection before answering CONNECT");
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(ctx, FAILED, 502, "connection failed while waiting for the answer to CONNECT: "
                + UpstreamConnector.rootMessage(cause));
    }

    private void fail(ChannelHandlerContext ctx, String reason, int status, String what) {
        if (tunnel.tryFailure(new UpstreamFailure(status, reason, "parent proxy " + parent + " " + what, ip))) {
            ctx.close();
        }
    }

    private static String printable(String s) {
        String cut = s.length() > 200 ? s.substring(0, 200) + "..." : s;
        return cut.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
