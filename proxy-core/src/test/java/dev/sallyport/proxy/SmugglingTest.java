package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Request smuggling through hop-by-hop headers, from the attacker's side: a client that lists the framing (or
 * {@code Host}) in {@code Connection} so that a proxy which strips what {@code Connection} names would forward the
 * body unframed, and a lenient upstream (which obeys whatever framing it sees) would read the body as a second
 * request that no policy decided. Through the shared upstream pool such a request would also answer, or swallow,
 * the next client's request; the cross-client cases use two clients and one pooled upstream connection. Plain
 * absolute-form HTTP and CONNECT tunnels with TLS inside take the same path and are both attacked.
 */
class SmugglingTest {

    static LenientBench bench;
    static String placeholder;
    static String realToken;

    @BeforeAll
    static void start() throws Exception {
        LenientUpstream.Responder responder = (request, connection) -> {
            if (request.requestLine().contains("/slow")) {
                connection.awaitMoreInput();    // answers only once another request is on its way
            }
            LenientUpstream.echo(request, connection);
        };
        realToken = "real-" + Long.toHexString(new java.security.SecureRandom().nextLong()) + "-token";
        bench = new LenientBench(responder, "  - name: public\n    hosts: [up.test]\n    ports: [PORTS]\n"
                + "    paths: [\"/public/**\"]\n", "secrets:\n  - name: TOKEN\n    from: file:TOKEN_FILE\n"
                + "    hosts: [up.test]\n    headers: [Authorization]\n", Map.of("TOKEN_FILE", realToken));
        placeholder = bench.proxy.secrets().placeholders().get("TOKEN");
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    static final String SMUGGLED = "GET /private/secrets HTTP/1.1\r\nHost: up.test\r\n\r\n";

    static Stream<Arguments> connectionLists() {
        Function<Way, String> contentLength = w -> "POST " + bench.target(w, "/public/a") + " HTTP/1.1\r\nHost: " + bench.host(w)
                + "\r\nContent-Length: " + SMUGGLED.length() + "\r\nConnection: Content-Length\r\n\r\n" + SMUGGLED;
        Function<Way, String> listedLater = w -> "POST " + bench.target(w, "/public/a") + " HTTP/1.1\r\nHost: " + bench.host(w)
                + "\r\nConnection: keep-alive\r\nContent-Length: " + SMUGGLED.length()
                + "\r\nConnection: x-trace ,  CONTENT-LENGTH\r\n\r\n" + SMUGGLED;
        Function<Way, String> transferEncoding = w -> "POST " + bench.target(w, "/public/a") + " HTTP/1.1\r\nHost: "
                + bench.host(w) + "\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding\r\n\r\n"
                + Integer.toHexString(SMUGGLED.length()) + "\r\n" + SMUGGLED + "\r\n0\r\n\r\n";
        Function<Way, String> host = w -> "GET " + bench.target(w, "/public/a") + " HTTP/1.1\r\nHost: " + bench.host(w)
                + "\r\nConnection: close, Host\r\n\r\n";
        return Stream.of(Way.values()).flatMap(w -> Stream.of(
                Arguments.of(w, "Connection: Content-Length", contentLength.apply(w)),
                Arguments.of(w, "Content-Length listed in a second Connection header", listedLater.apply(w)),
                Arguments.of(w, "Connection: Transfer-Encoding", transferEncoding.apply(w)),
                Arguments.of(w, "Connection: Host", host.apply(w))));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("connectionLists")
    void aConnectionHeaderThatNamesTheFramingOrTheHostIsRefusedAndNothingReachesTheUpstream(Way way, String what,
                                                                                           String request) {
        int before = bench.upstream(way).received().size();
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response response = client.send(request).read();
            assertThat(response).as(what).isNotNull();
            assertThat(response.status()).as(what).isEqualTo(400);
            assertThat(response.header("X-Sallyport-Reason")).isEqualTo("connection_lists_protected_header");
        }
        assertThat(bench.upstream(way).received()).as("nothing was forwarded").hasSize(before);
        bench.events.await("request", f -> "connection_lists_protected_header".equals(f.reason())
                && "deny".equals(f.decision()));
    }

    @ParameterizedTest
    @MethodSource("ways")
    void bodiesGoUpstreamFramedAsTheProxyParsedThemAndOtherListedHeadersAreStripped(Way way) {
        String body = "a=1&b=" + "x".repeat(100);
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response fixed = client.send("POST " + bench.target(way, "/public/fixed") + " HTTP/1.1\r\nHost: "
                    + bench.host(way) + "\r\nContent-Length: " + body.length() + "\r\nX-Trace: 1\r\nConnection: X-Trace\r\n"
                    + "\r\n" + body).read();
            assertThat(fixed.status()).isEqualTo(200);
            RawConnection.Response chunked = client.send("POST " + bench.target(way, "/public/chunked") + " HTTP/1.1\r\nHost: "
                    + bench.host(way) + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n").read();
            assertThat(chunked.status()).isEqualTo(200);
        }
        LenientUpstream.Received fixed = LenientBench.find(bench.upstream(way), "/public/fixed");
        assertThat(fixed.bodyText()).isEqualTo(body);
        assertThat(fixed.header("Content-Length")).isEqualTo(Integer.toString(body.length()));
        assertThat(fixed.header("X-Trace")).as("a header Connection lists is hop-by-hop").isNull();
        LenientUpstream.Received chunked = LenientBench.find(bench.upstream(way), "/public/chunked");
        assertThat(chunked.bodyText()).isEqualTo("hello world");
        assertThat(chunked.header("Transfer-Encoding")).isEqualTo("chunked");
        assertThat(bench.upstream(way).received()).noneMatch(r -> r.requestLine().contains("private"));
    }

    static Stream<Way> ways() {
        return Stream.of(Way.values());
    }

    /**
     * The smuggled request's answer comes late (once the next request is on the connection): had it reached the
     * upstream, the next client to reuse the pooled connection would read it as its own answer. Clients are
     * opened until one lands on the attacker's event loop (each loop has its own pool).
     */
    @ParameterizedTest
    @MethodSource("ways")
    void aSmuggledRequestsLateAnswerNeverReachesAnotherClient(Way way) {
        String slow = "GET /public/slow HTTP/1.1\r\nHost: up.test\r\n\r\n";
        try (RawConnection attacker = bench.open(way)) {
            attacker.send("POST " + bench.target(way, "/public/a") + " HTTP/1.1\r\nHost: " + bench.host(way) + "\r\nContent-Length: "
                    + slow.length() + "\r\nConnection: Content-Length\r\n\r\n" + slow).read();
        }
        for (int i = 0; i < LenientBench.clientsToCoverEveryLoop(); i++) {
            try (RawConnection victim = bench.open(way)) {
                RawConnection.Response r = victim.send("GET " + bench.target(way, "/public/victim-" + i) + " HTTP/1.1\r\nHost: "
                        + bench.host(way) + "\r\n\r\n").read();
                assertThat(r).as("victim " + i + " got an answer").isNotNull();
                assertThat(r.body()).as("victim " + i + " got its own answer").endsWith("GET /public/victim-" + i
                        + " HTTP/1.1");
            }
        }
        assertThat(bench.upstream(way).received()).noneMatch(r -> r.requestLine().contains("/public/slow"));
    }

    /**
     * A smuggled POST whose Content-Length covers the next request on the connection would store that request
     * (with the real token the proxy injected into it) where the attacker can read it later.
     */
    @Test
    void aSmuggledPostNeverSwallowsAnotherClientsRequestWithItsInjectedToken() {
        Way way = Way.TUNNEL;
        String store = "POST /public/store HTTP/1.1\r\nHost: up.test\r\nContent-Length: 600\r\n\r\n";
        try (RawConnection attacker = bench.open(way)) {
            attacker.send("POST /public/a HTTP/1.1\r\nHost: " + bench.host(way) + "\r\nContent-Length: " + store.length()
                    + "\r\nConnection: Content-Length\r\n\r\n" + store).read();
        }
        String body = "y".repeat(1000);
        for (int i = 0; i < LenientBench.clientsToCoverEveryLoop(); i++) {
            try (RawConnection victim = bench.open(way)) {
                RawConnection.Response r = victim.send("POST /public/victim-token-" + i + " HTTP/1.1\r\nHost: "
                        + bench.host(way) + "\r\nAuthorization: Bearer " + placeholder + "\r\nContent-Length: "
                        + body.length() + "\r\n\r\n" + body).read();
                assertThat(r).isNotNull();
                assertThat(r.body()).endsWith("POST /public/victim-token-" + i + " HTTP/1.1");
            }
        }
        LenientUpstream.Received first = LenientBench.find(bench.tls, "/public/victim-token-0");
        assertThat(first.header("Authorization")).as("the token was injected").isEqualTo("Bearer " + realToken);
        assertThat(bench.tls.received()).as("no request carries another request's token in its body")
                .noneMatch(r -> r.bodyText().contains(realToken));
        assertThat(bench.tls.received()).noneMatch(r -> r.requestLine().contains("/public/store"));
    }
}
