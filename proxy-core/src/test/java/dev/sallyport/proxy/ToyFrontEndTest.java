package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.exchange.Authority;
import dev.sallyport.proxy.exchange.Downstream;
import dev.sallyport.proxy.exchange.Exchange;
import dev.sallyport.proxy.exchange.ExchangeRequest;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.Transports;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.LenientUpstream;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.string.StringDecoder;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A front end that exists only here: a line protocol over plain TCP ({@code METHOD HOST:PORT PATH}, header lines,
 * a blank line; the answer comes back as {@code STATUS n}, header lines, body, {@code END}). It contains no
 * policy, no dial check, no secrets and no audit code; it only turns its protocol into an exchange request and a
 * downstream. Every stage still applies to it, because the exchange core alone runs them: denied hosts are refused,
 * a name that resolves to a private address is refused at the dial, a placeholder becomes the real value upstream,
 * the value echoed back is scrubbed, and each exchange is in the audit record.
 */
class ToyFrontEndTest {

    static final String REAL = "toy-real-token-0123456789";

    static SallyportProxy proxy;
    static LenientUpstream upstream;
    static EventLoopGroup group;
    static Channel toyServer;
    static final RecordingListener events = new RecordingListener();
    static String placeholder;

    @BeforeAll
    static void start() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        TestPki.Issued cert = pki.issue("up.test", "private.test");
        upstream = LenientUpstream.https(cert.key(), cert.chain(), (request, connection) -> connection.write(
                LenientUpstream.response(200, "auth=" + request.header("Authorization"))));
        Files.writeString(dir.resolve("token"), REAL + "\n");
        String yaml = ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + upstream.port(), "",
                "  - name: toy-up\n    hosts: [up.test, private.test]\n    ports: [" + upstream.port() + "]\n")
                .replace("AUDIT_PATH", dir.resolve("audit.jsonl").toString())
                + "secrets:\n  - name: TOKEN\n    from: file:" + dir.resolve("token") + "\n    hosts: [up.test]\n"
                + "    headers: [Authorization]\n";
        proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "toy.yaml"))
                .withCa(CertificateAuthority.ephemeral("toy CA")).withListen(new HostPort("127.0.0.1", 0))
                .withAdmin(new HostPort("127.0.0.1", 0)).withListener(events)
                .withResolver(new MapResolver().map("up.test", "127.0.0.1").map("private.test", "10.0.0.7"))
                .withPlaceholders(Placeholders.ephemeral()));
        placeholder = proxy.secrets().placeholders().get("TOKEN");
        group = Transports.group(1);   // the exchange dials on its client's loop: the proxy's transport
        toyServer = new ServerBootstrap().group(group).channel(Transports.serverChannel())
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LineBasedFrameDecoder(8192), new StringDecoder(StandardCharsets.UTF_8),
                                new ToyFrontEnd());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    @AfterAll
    static void stop() {
        toyServer.close().syncUninterruptibly();
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        proxy.close();
        upstream.close();
    }

    @Test
    void aPlaceholderBecomesTheRealValueUpstreamAndTheEchoIsScrubbed() {
        String answer = toy("GET up.test:" + upstream.port() + " /echo", "Authorization: Bearer " + placeholder);
        assertThat(answer).startsWith("STATUS 200").contains("auth=Bearer ").doesNotContain(REAL)
                .doesNotContain(placeholder);
        assertThat(upstream.received()).anySatisfy(r -> assertThat(r.header("Authorization"))
                .isEqualTo("Bearer " + REAL));
        AuditFields record = events.await("exchange", f -> "/echo".equals(f.path()));
        assertThat(record.host()).isEqualTo("up.test");
        assertThat(record.status()).isEqualTo(200);
        assertThat(record.secrets()).containsExactly("TOKEN");
    }

    @Test
    void aHostThePolicyDoesNotNameIsRefusedAndRecorded() {
        int before = upstream.received().size();
        String answer = toy("GET other.test:" + upstream.port() + " /denied", "");
        assertThat(answer).startsWith("REFUSED 403 no_matching_rule");
        assertThat(upstream.received()).hasSize(before);
        assertThat(events.await("request", f -> "/denied".equals(f.path())).decision()).isEqualTo("deny");
    }

    @Test
    void aNameThatResolvesToAPrivateAddressIsRefusedAtTheDial() {
        String answer = toy("GET private.test:" + upstream.port() + " /private", "");
        assertThat(answer).startsWith("REFUSED 403 private_address");
        AuditFields refused = events.await("request", f -> "/private".equals(f.path()) && "deny".equals(f.decision()));
        assertThat(refused.ip()).isEqualTo("10.0.0.7");
    }

    @Test
    void aPlaceholderTowardAHostItIsNotBoundToIsRefused() {
        String answer = toy("GET private.test:" + upstream.port() + " /wrong-host",
                "Authorization: Bearer " + placeholder);
        assertThat(answer).startsWith("REFUSED 403 secret_wrong_host");
        assertThat(events.await("request", f -> "/wrong-host".equals(f.path())).secrets()).containsExactly("TOKEN");
    }

    /** One toy exchange: the request lines, then everything the toy front end answered until it closed. */
    static String toy(String requestLine, String header) {
        try (Socket s = new Socket()) {
            s.connect(toyServer.localAddress(), 5000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write((requestLine + "\n" + (header.isEmpty() ? "" : header + "\n") + "\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            return RawClient.readAll(s.getInputStream());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The toy protocol, both ways; nothing of the proxy's stages is here. */
    static final class ToyFrontEnd extends SimpleChannelInboundHandler<String> implements Downstream {
        private ChannelHandlerContext ctx;
        private String[] requestLine;
        private final HttpHeaders headers = new DefaultHttpHeaders();

        @Override
        public void handlerAdded(ChannelHandlerContext c) {
            ctx = c;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext c, String line) {
            if (requestLine == null) {
                requestLine = line.split(" ");
                return;
            }
            if (!line.isEmpty()) {
                int colon = line.indexOf(':');
                headers.add(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
                return;
            }
            Authority target = Authority.parse(requestLine[1], 443);
            headers.set("Host", requestLine[1]);
            ExchangeRequest request = new ExchangeRequest(requestLine[0], target, requestLine[2], headers,
                    ExchangeRequest.BodyShape.none(), UpstreamLeg.TLS, ExchangeRequest.Upgrade.NONE,
                    new ExchangeRequest.Origin(((InetSocketAddress) c.channel().remoteAddress()).getAddress()
                            .getHostAddress() + ":" + ((InetSocketAddress) c.channel().remoteAddress()).getPort(),
                            "none", null));
            Exchange exchange = proxy.core().start(request, this);
            if (exchange != null) {
                exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
            }
        }

        @Override
        public Channel channel() {
            return ctx.channel();
        }

        @Override
        public ChannelFuture send(HttpObject part, boolean flush) {
            ChannelFuture written;
            if (part instanceof HttpResponse head) {
                StringBuilder text = new StringBuilder("STATUS ").append(head.status().code()).append('\n');
                head.headers().forEach(h -> text.append(h.getKey()).append(": ").append(h.getValue()).append('\n'));
                written = ctx.write(Unpooled.copiedBuffer(text.append('\n'), StandardCharsets.UTF_8));
            } else {
                HttpContent content = (HttpContent) part;
                written = ctx.write(content.content().retain());
                content.release();
                if (part instanceof LastHttpContent) {
                    written = ctx.write(Unpooled.copiedBuffer("\nEND\n", StandardCharsets.UTF_8));
                }
            }
            if (flush) {
                ctx.flush();
            }
            return written;
        }

        @Override
        public void flush() {
            ctx.flush();
        }

        @Override
        public void readRequestBody() {
            // the toy protocol has no bodies
        }

        @Override
        public void refuse(int status, String reason, String detail, boolean keepOpen) {
            ctx.writeAndFlush(Unpooled.copiedBuffer("REFUSED " + status + " " + reason + "\n", StandardCharsets.UTF_8))
                    .addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public void abort() {
            ctx.close();
        }

        @Override
        public void ended(boolean keepOpen) {
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public Channel becomeRelay(List<ChannelHandler> inbound) {
            throw new UnsupportedOperationException("the toy protocol has no upgrades");
        }
    }
}
