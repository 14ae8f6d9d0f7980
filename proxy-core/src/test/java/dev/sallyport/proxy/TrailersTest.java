package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Request trailers from the attacker's side: a chunked body's trailer section carrying what a head may carry only
 * after the proxy checked it (Host, Authorization, Cookie, framing, method overrides) or a placeholder. Refused,
 * audited, and the upstream never gets a complete request; innocent trailers pass. Response trailers lose the
 * fields a trailer may not carry.
 */
class TrailersTest {

    static LenientBench bench;
    static String placeholder;
    static String otherPlaceholder;

    @BeforeAll
    static void start() throws Exception {
        LenientUpstream.Responder responder = (request, connection) -> {
            if (request.requestLine().contains("/trailers-back ")) {
                connection.write(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
                        + "grpc-status: 0\r\nSet-Cookie: session=planted\r\nContent-Length: 99\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                return;
            }
            LenientUpstream.echo(request, connection);
        };
        bench = new LenientBench(responder, "  - name: up\n    hosts: [up.test]\n    ports: [PORTS]\n",
                "secrets:\n  - name: TOKEN\n    from: file:TOKEN_FILE\n    hosts: [up.test]\n"
                        + "    headers: [Authorization]\n  - name: OTHER\n    from: file:OTHER_FILE\n"
                        + "    hosts: [elsewhere.test]\n    headers: [Authorization]\n",
                Map.of("TOKEN_FILE", "tok-real-value-1234", "OTHER_FILE", "other-real-value-5678"));
        placeholder = bench.proxy.secrets().placeholders().get("TOKEN");
        otherPlaceholder = bench.proxy.secrets().placeholders().get("OTHER");
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    static String chunked(Way way, String path, String trailers) {
        return "POST " + bench.target(way, path) + " HTTP/1.1\r\nHost: " + bench.host(way)
                + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n" + trailers + "\r\n";
    }

    static Stream<Arguments> refused() {
        return Stream.of(Way.values()).flatMap(w -> Stream.of(
                Arguments.of(w, "Host: evil.test\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "Authorization: Bearer abc\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "Cookie: session=1\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "Content-Length: 5\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "transfer-encoding: chunked\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "X-HTTP-Method-Override: DELETE\r\n", 400, "forbidden_trailer"),
                Arguments.of(w, "X-Checksum: " + otherPlaceholder + "\r\n", 403, "secret_wrong_host")));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("refused")
    void aTrailerThatMayNotBeThereIsRefusedAndTheUpstreamNeverGetsAWholeRequest(Way way, String trailer, int status,
                                                                               String reason) {
        String path = "/refused-" + Integer.toHexString(trailer.hashCode()) + "-" + way;
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send(chunked(way, path, trailer)).read();
            assertThat(r).as(trailer).isNotNull();
            assertThat(r.status()).as(trailer).isEqualTo(status);
            assertThat(r.header("X-Sallyport-Reason")).isEqualTo(reason);
        }
        bench.events.await("exchange", f -> f.path() != null && f.path().equals(path) && reason.equals(f.reason()));
        assertThat(bench.upstream(way).received()).as("no complete request reached the upstream")
                .noneMatch(q -> q.requestLine().contains(path));
    }

    @ParameterizedTest
    @MethodSource("ways")
    void aPlaceholderInATrailerToItsOwnHostGoesOnUnchangedAndIsAudited(Way way) {
        String path = "/own-trailer-" + way;
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send(chunked(way, path, "X-Checksum: " + placeholder + "\r\n")).read();
            assertThat(r.status()).isEqualTo(200);
        }
        LenientUpstream.Received got = LenientBench.find(bench.upstream(way), path);
        assertThat(got.trailers()).containsExactly("X-Checksum: " + placeholder);
        assertThat(bench.upstream(way).rawReceived()).doesNotContain("tok-real-value-1234");
        assertThat(bench.events.await("exchange", f -> path.equals(f.path())).placeholdersForwarded())
                .containsExactly("TOKEN");
    }

    @ParameterizedTest
    @MethodSource("ways")
    void innocentTrailersPass(Way way) {
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send(chunked(way, "/innocent", "X-Checksum: abc123\r\n")).read();
            assertThat(r.status()).isEqualTo(200);
        }
        LenientUpstream.Received got = bench.upstream(way).received().stream()
                .filter(q -> q.requestLine().contains("/innocent ")).findFirst().orElseThrow();
        assertThat(got.bodyText()).isEqualTo("hello");
        assertThat(got.trailers()).containsExactly("X-Checksum: abc123");
    }

    @ParameterizedTest
    @MethodSource("ways")
    void responseTrailersLoseTheFieldsATrailerMayNotCarry(Way way) {
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send(bench.request(way, "GET", "/trailers-back")).read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ok");
            assertThat(r.trailers()).containsExactly("grpc-status: 0");
        }
    }

    static Stream<Way> ways() {
        return Stream.of(Way.values());
    }
}
