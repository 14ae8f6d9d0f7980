package dev.sallyport.proxy.admin;

import dev.sallyport.proxy.reload.ReloadResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes admin requests. Cheap answers ({@code /healthz}, {@code /readyz}) run on the event loop; scraping
 * and reloading run on the admin executor. Responses on one connection leave in request order.
 */
@ChannelHandler.Sharable
final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminHandler.class);
    private static final AttributeKey<CompletableFuture<Void>> LAST = AttributeKey.valueOf("sallyport.admin.last");
    static final String METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final AdminEndpoints endpoints;
    private final Executor slow;

    AdminHandler(AdminEndpoints endpoints, Executor slow) {
        this.endpoints = endpoints;
        this.slow = slow;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        boolean ok = req.decoderResult().isSuccess();
        boolean keepAlive = ok && HttpUtil.isKeepAlive(req);
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        HttpMethod method = req.method();
        String authorization = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        String peer = String.valueOf(ctx.channel().remoteAddress());

        boolean sandboxes = path.equals("/sandboxes") || path.startsWith("/sandboxes/");
        boolean offload = ok && (path.equals("/metrics") || path.equals("/reload") || sandboxes);
        String body = sandboxes ? req.content().toString(StandardCharsets.UTF_8) : "";
        String sandboxToken = req.headers().get(SandboxEndpoints.TOKEN_HEADER);
        Supplier<AdminReply> work = !ok
                ? () -> AdminReply.text(HttpResponseStatus.BAD_REQUEST, "bad request\n")
                : sandboxes ? () -> sandboxes(method, uri, body, authorization, sandboxToken, peer)
                : () -> route(method, path, authorization, peer);

        CompletableFuture<Void> previous = ctx.channel().attr(LAST).get();
        CompletableFuture<Void> before = previous == null ? CompletableFuture.completedFuture(null) : previous;
        CompletableFuture<AdminReply> reply = offload
                ? before.thenApplyAsync(v -> work.get(), slow)
                : before.thenApply(v -> work.get());
        CompletableFuture<Void> next = reply
                .exceptionally(e -> {
                    LOGGER.warn("admin {} {}: failed: {}", method, path, e.toString());
                    return AdminReply.text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error\n");
                })
                .thenAccept(r -> write(ctx, r, keepAlive));
        ctx.channel().attr(LAST).set(next);
    }

    private AdminReply route(HttpMethod method, String path, String authorization, String peer) {
        return switch (path) {
            case "/healthz" -> get(method, () -> AdminReply.text(HttpResponseStatus.OK, "ok\n"));
            case "/readyz" -> get(method, this::readiness);
            case "/metrics" -> get(method,
                    () -> new AdminReply(HttpResponseStatus.OK, METRICS_TYPE, endpoints.scrape().get(), null, null));
            case "/reload" -> method.equals(HttpMethod.POST)
                    ? reload(authorization, peer)
                    : notAllowed("POST");
            default -> AdminReply.text(HttpResponseStatus.NOT_FOUND,
                    "not found (expected: GET /metrics, /healthz, /readyz, POST /reload or /sandboxes)\n");
        };
    }

    private static AdminReply get(HttpMethod method, Supplier<AdminReply> answer) {
        return method.equals(HttpMethod.GET) ? answer.get() : notAllowed("GET");
    }

    private static AdminReply notAllowed(String allow) {
        return AdminReply.text(HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed (expected: " + allow + ")\n")
                .with("Allow", allow);
    }

    private AdminReply readiness() {
        Optional<String> reason = endpoints.notReady().get();
        return reason.map(r -> AdminReply.text(HttpResponseStatus.SERVICE_UNAVAILABLE, "not ready: " + r + "\n"))
                .orElseGet(() -> AdminReply.text(HttpResponseStatus.OK, "ready\n"));
    }

    private AdminReply sandboxes(HttpMethod method, String uri, String body, String authorization,
                                 String sandboxToken, String peer) {
        if (endpoints.sandboxes() == null) {
            return AdminReply.text(HttpResponseStatus.NOT_FOUND, "not found: this proxy takes no sandboxes\n");
        }
        AdminReply refused = unauthorized("registering sandboxes", method + " /sandboxes", authorization, peer);
        return refused != null ? refused : endpoints.sandboxes().route(method, uri, body, sandboxToken);
    }

    /** Null when {@code authorization} carries the admin token; else the answer that refuses {@code what}. */
    private AdminReply unauthorized(String what, String request, String authorization, String peer) {
        AdminToken token = endpoints.token();
        if (token == null) {
            return AdminReply.text(HttpResponseStatus.FORBIDDEN, what + " over HTTP is disabled: no admin token is"
                    + " configured (expected: 'admin_token: {env: NAME}' or 'admin_token: {file: PATH}' under 'proxy:'"
                    + " in the policy, naming where the token is" + (what.equals("reload") ? "; or send SIGHUP to"
                    + " reload" : "") + ")\n");
        }
        if (!token.matches(authorization)) {
            LOGGER.warn("admin {} refused: client={} reason={}", request, peer,
                    authorization == null ? "no_token" : "wrong_token");
            return AdminReply.text(HttpResponseStatus.UNAUTHORIZED,
                    "unauthorized (expected: Authorization: Bearer <admin token>)\n").with("WWW-Authenticate", "Bearer");
        }
        return null;
    }

    private AdminReply reload(String authorization, String peer) {
        AdminReply refused = unauthorized("reload", "POST /reload", authorization, peer);
        if (refused != null) {
            return refused;
        }
        ReloadResult result = endpoints.reload().get();
        StringBuilder body = new StringBuilder(result.success() ? "reloaded\n" : "reload failed; old policy kept\n");
        result.errors().forEach(e -> body.append(e).append('\n'));
        result.notes().forEach(n -> body.append(n).append('\n'));
        return AdminReply.text(result.success() ? HttpResponseStatus.OK : HttpResponseStatus.UNPROCESSABLE_ENTITY,
                body.toString());
    }

    private static void write(ChannelHandlerContext ctx, AdminReply reply, boolean keepAlive) {
        ByteBuf body = Unpooled.copiedBuffer(reply.body(), StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, reply.status(), body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, reply.contentType());
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        HttpUtil.setContentLength(response, body.readableBytes());
        if (reply.headerName() != null) {
            response.headers().set(reply.headerName(), reply.headerValue());
        }
        HttpUtil.setKeepAlive(response, keepAlive);
        var future = ctx.writeAndFlush(response);
        if (!keepAlive) {
            future.addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            ctx.close();
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOGGER.debug("admin connection {} failed", ctx.channel().remoteAddress(), cause);
        ctx.close();
    }
}
