package dev.sallyport.proxy.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.IpAddress;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.audit.AuditGate;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.SecretStore;
import dev.sallyport.proxy.inject.UpstreamLeg;
import dev.sallyport.proxy.internal.ProxyContext;
import dev.sallyport.proxy.reload.Snapshot;
import dev.sallyport.proxy.upstream.Destination;
import dev.sallyport.proxy.upstream.Dialer;
import dev.sallyport.proxy.upstream.UpstreamCodec;
import dev.sallyport.proxy.upstream.UpstreamFailure;
import dev.sallyport.proxy.upstream.UpstreamInitializer;
import dev.sallyport.proxy.upstream.UpstreamLease;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The core's stages one exchange at a time, byte-exact, on {@code EmbeddedChannel}s with their clock moved by the
 * test (no socket, no wall-clock wait): the request as it goes upstream (framing set by the core, hop-by-hop fields
 * gone, the placeholder swapped), what the client gets back (scrubbed), the response-headers timeout, refusals
 * before any dial, a dial refused by {@code network.deny}, and when an injected secret counts.
 */
class ExchangeCoreTest {

    static final String REAL = "real-core-value-4242";

    static Policy policy;
    static SecretStore secrets;
    static String placeholder;

    @BeforeAll
    static void load() throws Exception {
        policy = PolicyLoader.parse("proxy:\n  timeouts: {response_headers: 2s}\n"
                + "rules:\n  - name: up\n    hosts: [up.test]\n    ports: [443]\n"
                + "secrets:\n  - name: TOKEN\n    from: env:TOKEN\n    hosts: [up.test]\n    headers: [Authorization]\n",
                "core-test.yaml");
        secrets = SecretStore.load(policy.secrets(), Placeholders.ephemeral(), Map.of("TOKEN", REAL)::get,
                InstantSource.system());
        placeholder = secrets.placeholders().get("TOKEN");
    }

    /** One test's world: the client channel, the upstream channel the dialer hands out, the recorded events. */
    static final class World implements AuditGate, Dialer, AutoCloseable {
        final EmbeddedChannel client = new EmbeddedChannel();
        final EmbeddedChannel upstream = new EmbeddedChannel();
        final List<ProxyEvent> events = new CopyOnWriteArrayList<>();
        final Client down = new Client(client);
        final List<Boolean> released = new ArrayList<>();
        UpstreamFailure dialFailure;
        int dials;
        final ExchangeCore core;

        World() {
            client.freezeTime();    // the clock moves only when a test moves it, however slow the machine
            upstream.freezeTime();
            upstream.pipeline().addLast(UpstreamInitializer.CODEC, new UpstreamCodec(new HttpDecoderConfig()));
            upstream.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
                @Override
                public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                    ctx.close();    // as the proxy's upstream pipeline ends: a connection out of step closes
                }
            });
            ProxyContext context = new ProxyContext(() -> new Snapshot(PolicyEngine.compile(policy), secrets), this,
                    e -> { }, InstantSource.system(), new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE));
            core = new ExchangeCore(context, this);
        }

        @Override
        public Future<UpstreamLease> acquire(Destination dest, PolicyEngine engine, EventLoop loop, String client) {
            dials++;
            if (dialFailure != null) {
                return loop.newFailedFuture(dialFailure);
            }
            return loop.newSucceededFuture(new UpstreamLease(upstream, IpAddress.parseStrict("192.0.2.10")
                    .orElseThrow(), dest, false));
        }

        @Override
        public void release(UpstreamLease lease, boolean reusable) {
            released.add(reusable);
        }

        @Override
        public boolean accepting() {
            return true;
        }

        @Override
        public boolean admit(ProxyEvent decision) {
            events.add(decision);
            return true;
        }

        @Override
        public void on(ProxyEvent event) {
            events.add(event);
        }

        Exchange start(String method, String path, HttpHeaders headers, ExchangeRequest.BodyShape body) {
            headers.set("Host", "up.test");
            return core.start(new ExchangeRequest(method, new Authority("up.test", 443), path, headers, body,
                    UpstreamLeg.TLS, ExchangeRequest.Upgrade.NONE,
                    new ExchangeRequest.Origin("127.0.0.1:40000", "intercepted", "up.test")), down);
        }

        /** Everything the upstream channel was sent, as text. */
        String sentUpstream() {
            StringBuilder out = new StringBuilder();
            for (ByteBuf b; (b = upstream.readOutbound()) != null; ) {
                out.append(b.toString(StandardCharsets.ISO_8859_1));
                b.release();
            }
            return out.toString();
        }

        void respond(String bytes) {
            upstream.writeInbound(Unpooled.copiedBuffer(bytes, StandardCharsets.ISO_8859_1));
            upstream.pipeline().fireChannelReadComplete();
        }

        @Override
        public void close() {
            upstream.finishAndReleaseAll();
            client.finishAndReleaseAll();
        }

        List<AuditFields> completed() {
            return events.stream().filter(e -> e instanceof ProxyEvent.ExchangeCompleted)
                    .map(e -> ((ProxyEvent.ExchangeCompleted) e).fields()).toList();
        }
    }

    /** The client side as the core sees it: what it was sent, refused with, and how it ended. */
    static final class Client implements Downstream {
        final EmbeddedChannel channel;
        final StringBuilder received = new StringBuilder();
        String refusal;
        Boolean endedOpen;
        int bodyReads;

        Client(EmbeddedChannel channel) {
            this.channel = channel;
        }

        @Override
        public Channel channel() {
            return channel;
        }

        @Override
        public ChannelFuture send(HttpObject part, boolean flush) {
            if (part instanceof HttpResponse head) {
                received.append(head.status().code()).append(' ').append(head.headers().entries()).append('|');
            }
            if (part instanceof HttpContent content) {
                received.append(content.content().toString(StandardCharsets.ISO_8859_1));
                if (part instanceof LastHttpContent) {
                    received.append("|END");
                }
                content.release();
            }
            return channel.newSucceededFuture();
        }

        @Override
        public void flush() {
        }

        @Override
        public void readRequestBody() {
            bodyReads++;
        }

        @Override
        public void refuse(int status, String reason, String detail, boolean keepOpen) {
            refusal = status + " " + reason;
        }

        @Override
        public void abort() {
            refusal = "aborted";
        }

        @Override
        public void ended(boolean keepOpen) {
            endedOpen = keepOpen;
        }

        @Override
        public Channel becomeRelay(List<ChannelHandler> inbound) {
            throw new UnsupportedOperationException();
        }
    }

    @Test
    void theRequestGoesUpstreamFramedByTheCoreWithoutHopByHopFieldsAndWithTheRealValue() {
        try (World w = new World()) {
            HttpHeaders h = new DefaultHttpHeaders().add("Authorization", "Bearer " + placeholder)
                    .add("Connection", "keep-alive, X-Trace").add("X-Trace", "1").add("Content-Length", "999")
                    .add("Proxy-Authorization", "Basic Zm9v");
            Exchange exchange = w.start("POST", "/v1/items?x=1", h, new ExchangeRequest.BodyShape.Length(5));
            exchange.requestBody(new DefaultHttpContent(Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII)));
            exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
            assertThat(w.sentUpstream()).isEqualTo("POST /v1/items?x=1 HTTP/1.1\r\nAuthorization: Bearer " + REAL
                    + "\r\nHost: up.test\r\ncontent-length: 5\r\naccept-encoding: identity\r\n\r\nhello");
            assertThat(w.events).anySatisfy(e -> assertThat(e).isInstanceOf(ProxyEvent.SecretInjected.class));
        }
    }

    @Test
    void theResponseReachesTheClientScrubbedAndTheExchangeEndsOnce() {
        try (World w = new World()) {
            Exchange exchange = w.start("GET", "/echo", new DefaultHttpHeaders(), ExchangeRequest.BodyShape.none());
            exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
            w.sentUpstream();
            String body = "token=" + REAL;
            w.respond("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\nX-Echo: " + REAL + "\r\n\r\n" + body);
            assertThat(w.down.received.toString()).startsWith("200 ").doesNotContain(REAL).endsWith("|END")
                    .contains("token=");
            assertThat(w.down.endedOpen).isTrue();
            assertThat(w.released).containsExactly(true);
            assertThat(w.completed()).singleElement().satisfies(f -> {
                assertThat(f.status()).isEqualTo(200);
                assertThat(f.bytesDown()).isEqualTo(body.length());
                assertThat(f.secrets()).isNull();
            });
            assertThat(exchange.inProgress()).isFalse();
        }
    }

    @Test
    void noResponseHeadWithinTheTimeoutIsA504OnTheInjectedClock() {
        try (World w = new World()) {
            Exchange exchange = w.start("GET", "/slow", new DefaultHttpHeaders(), ExchangeRequest.BodyShape.none());
            exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
            w.client.advanceTimeBy(1999, TimeUnit.MILLISECONDS);
            w.client.runScheduledPendingTasks();
            assertThat(w.down.refusal).isNull();
            w.client.advanceTimeBy(2, TimeUnit.MILLISECONDS);
            w.client.runScheduledPendingTasks();
            assertThat(w.down.refusal).isEqualTo("504 upstream_timeout");
            assertThat(w.released).containsExactly(false);
            assertThat(w.completed()).singleElement().satisfies(f -> assertThat(f.reason()).isEqualTo("upstream_timeout"));
        }
    }

    @Test
    void aConnectionFieldNamingTheFramingIsRefusedBeforeAnyDial() {
        try (World w = new World()) {
            Exchange exchange = w.start("POST", "/a", new DefaultHttpHeaders().add("Connection", "Content-Length"),
                    new ExchangeRequest.BodyShape.Length(3));
            assertThat(exchange).isNull();
            assertThat(w.down.refusal).isEqualTo("400 connection_lists_protected_header");
            assertThat(w.dials).isZero();
        }
    }

    @Test
    void aDialRefusedByNetworkDenyInjectsNothingAndIsRecordedAsADeny() {
        try (World w = new World()) {
            w.dialFailure = new UpstreamFailure(403, "private_address", "address 10.0.0.1 is denied", "10.0.0.1");
            w.start("GET", "/x", new DefaultHttpHeaders().add("Authorization", "Bearer " + placeholder),
                    ExchangeRequest.BodyShape.none());
            assertThat(w.down.refusal).isEqualTo("403 private_address");
            assertThat(w.events).noneMatch(e -> e instanceof ProxyEvent.SecretInjected);
            assertThat(w.events).anySatisfy(e -> assertThat(e).isInstanceOfSatisfying(ProxyEvent.Decided.class,
                    d -> assertThat(d.fields().decision()).isEqualTo("deny")));
            assertThat(w.completed()).singleElement().satisfies(f -> assertThat(f.secrets()).isNull());
        }
    }

    @Test
    void bytesAfterTheResponseKeepTheConnectionOutOfThePool() {
        try (World w = new World()) {
            Exchange exchange = w.start("GET", "/x", new DefaultHttpHeaders(), ExchangeRequest.BodyShape.none());
            exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
            w.sentUpstream();
            w.respond("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL");
            assertThat(w.down.received.toString()).startsWith("204 ").doesNotContain("EVIL");
            assertThat(UpstreamCodec.inStep(w.upstream)).as("never pooled again").isFalse();
            assertThat(w.upstream.isOpen()).as("the connection that sent more than its answer is closed").isFalse();
        }
    }
}
