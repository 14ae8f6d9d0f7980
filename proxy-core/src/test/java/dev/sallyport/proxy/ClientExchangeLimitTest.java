package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.proxy.testing.RawH2;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Trust;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One client tries to hold more upstream connections than its share through HTTP/2: every stream is an exchange with
 * an upstream connection of its own, so 100 streams on each of many connections would be 100 upstream connections
 * per client connection. {@code proxy.limits.max_exchanges_per_client} counts the exchanges of one client (its
 * HTTP/1.1 requests and HTTP/2 streams together, over all its connections): beyond it a stream is answered {@code 429
 * client_exchange_limit} on that stream alone, an HTTP/1.1 request gets the same, and another client is served.
 */
class ClientExchangeLimitTest {

    static final int LIMIT = 5;

    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;
    static String authority;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test");
        String rules = "  - name: api\n    hosts: [api.test]\n    ports: [" + up.tls.port() + ", " + up.plain.port()
                + "]\n";
        String limits = "  http2: true\n  limits: {max_exchanges_per_client: " + LIMIT + "}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, "api.test:" + up.tls.port() + ", api.test:"
                + up.plain.port(), limits, rules), new MapResolver().map("api.test", "127.0.0.1"), up.dir);
        trust = Trust.of(proxy.caPem);
        authority = "api.test:" + up.tls.port();
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    @Test
    void streamsBeyondTheClientsExchangeLimitAreRefusedOnTheirOwnWhileAnotherClientIsServed() {
        try (RawH2 first = raw(); RawH2 second = raw()) {
            for (int i = 0, stream = 1; i < LIMIT; i++, stream += 2) {     // upstream never answers: each stays held
                first.headers(stream, true, RawH2.request("GET", authority, "/silent/held-" + i));
            }
            Await.until("the upstream holds " + LIMIT + " requests", Duration.ofSeconds(10),
                    () -> up.tls.requests.stream().filter(r -> r.contains("/silent/held-")).count() == LIMIT);

            first.headers(11, true, RawH2.request("GET", authority, "/h2/over-on-the-same-connection"));
            RawH2.StreamResult over = first.await(11);
            assertThat(over.status()).isEqualTo("429");
            assertThat(over.headers().get("x-sallyport-reason").toString()).isEqualTo("client_exchange_limit");
            assertThat(over.connectionClosed()).as("the connection stays open").isFalse();

            second.headers(1, true, RawH2.request("GET", authority, "/h2/over-on-another-connection"));
            assertThat(second.await(1).status()).as("counted across the client's connections").isEqualTo("429");
            RawConnection.Response h1 = http11(authority, "/h1/over-in-a-tunnel");
            assertThat(h1.status()).as("and across HTTP/1.1").isEqualTo(429);
            assertThat(h1.header("X-Sallyport-Reason")).isEqualTo("client_exchange_limit");

            assertThat(plainFrom("127.0.0.2", "/other-client")).as("another client is served")
                    .startsWith("HTTP/1.1 200 ");

            first.rst(1, 0x8);      // one held stream given up: its slot is free again
            Await.until("the reset stream's exchange ended", Duration.ofSeconds(10),
                    () -> proxy.events.all("exchange").stream().anyMatch(f -> "/silent/held-0".equals(f.path())));
            first.headers(13, true, RawH2.request("GET", authority, "/h2/after-a-slot-was-freed"));
            assertThat(first.await(13).status()).isEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/over-on").doesNotContain("/h1/over");
        List<AuditFields> refused = refusals();
        assertThat(refused).as("each refusal audited").hasSize(3).allSatisfy(f -> {
            assertThat(f.status()).isEqualTo(429);
            assertThat(f.decision()).isEqualTo("deny");
            assertThat(f.client()).startsWith("127.0.0.1:");
        });
        assertThat(refused).extracting(AuditFields::protocol).containsExactlyInAnyOrder("h2", "h2", "http/1.1");
        assertThat(proxy.proxy.metrics().registry().get("sallyport.client.limit.refusals").tag("limit", "exchanges")
                .counter().count()).isEqualTo(3.0);
    }

    private static List<AuditFields> refusals() {
        return proxy.events.events.stream().filter(e -> e instanceof ProxyEvent.Decided d
                        && "client_exchange_limit".equals(d.fields().reason()))
                .map(e -> ((ProxyEvent.Decided) e).fields()).toList();
    }

    private static RawH2 raw() {
        return RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context);
    }

    private static RawConnection.Response http11(String target, String path) {
        try (RawConnection c = RawConnection.tunnel(proxy.address(), "api.test", up.tls.port(), trust.context)) {
            return c.send("GET " + path + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n").read();
        }
    }

    /** An absolute-form request from another loopback address: another client to the proxy. */
    private static String plainFrom(String source, String path) {
        String target = "api.test:" + up.plain.port();
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(source, 0));
            s.connect(proxy.address(), 5000);
            s.setSoTimeout(5000);
            s.getOutputStream().write(("GET http://" + target + path + " HTTP/1.1\r\nHost: " + target
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
