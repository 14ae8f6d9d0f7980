package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upstreams that answer with more than one response, from the attacker's side: an extra response after a normal
 * one, a 204 or 304 that carries a body, a body behind the answer to a HEAD, a 101 to a request that asked for no
 * upgrade, a response whose Connection header names its own framing. None of these bytes may become the answer to
 * another request: not the same client's next (pipelined) request, not another client's on the pooled connection.
 */
class ResponseDesyncTest {

    static final String INJECTED = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nX-Poison: 1\r\n\r\nINJECTED";

    static LenientBench bench;

    @BeforeAll
    static void start() throws Exception {
        LenientUpstream.Responder responder = (request, connection) -> {
            String line = request.requestLine();
            String answer = line.contains("/extra ") ? new String(LenientUpstream.response(200, "first"),
                    StandardCharsets.ISO_8859_1) + INJECTED
                    : line.contains("/no-content ") ? "HTTP/1.1 204 No Content\r\nContent-Length: " + INJECTED.length()
                    + "\r\n\r\n" + INJECTED
                    : line.contains("/no-content-chunked ") ? "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked"
                    + "\r\n\r\n" + INJECTED
                    : line.contains("/not-modified ") ? "HTTP/1.1 304 Not Modified\r\nContent-Length: 8\r\n\r\n"
                    + INJECTED
                    : line.startsWith("HEAD ") ? "HTTP/1.1 200 OK\r\nContent-Length: " + INJECTED.length()
                    + "\r\n\r\n" + INJECTED
                    : line.contains("/switch ") ? "HTTP/1.1 101 Switching Protocols\r\nUpgrade: evil\r\n"
                    + "Connection: upgrade\r\n\r\n" + INJECTED
                    : line.contains("/framing-hop ") ? "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
                    + "Connection: Content-Length\r\n\r\nhello" + INJECTED
                    : null;
            if (answer == null) {
                LenientUpstream.echo(request, connection);
            } else {
                connection.write(answer.getBytes(StandardCharsets.ISO_8859_1));
            }
        };
        bench = new LenientBench(responder, "  - name: up\n    hosts: [up.test]\n    ports: [PORTS]\n");
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    /** The first request's answer is allowed to be odd (or refused); what follows must be the proxy's own. */
    static Stream<Arguments> shapes() {
        return Stream.of(Way.values()).flatMap(w -> Stream.of(
                Arguments.of(w, "GET", "/extra", "a second response in the same write"),
                Arguments.of(w, "GET", "/no-content", "a 204 with a Content-Length body"),
                Arguments.of(w, "GET", "/no-content-chunked", "a 204 that says chunked"),
                Arguments.of(w, "GET", "/not-modified", "a 304 followed by a body"),
                Arguments.of(w, "HEAD", "/head", "a body behind the answer to a HEAD"),
                Arguments.of(w, "GET", "/switch", "a 101 to a request that asked for no upgrade"),
                Arguments.of(w, "GET", "/framing-hop", "Connection: Content-Length in a response")));
    }

    @ParameterizedTest(name = "{0} {1} {2}: {3}")
    @MethodSource("shapes")
    void extraBytesAfterAResponseNeverAnswerTheNextPipelinedRequest(Way way, String method, String path, String what) {
        try (RawConnection client = bench.open(way)) {
            client.send(bench.request(way, method, path) + bench.request(way, "GET", "/next"));
            RawConnection.Response first = method.equals("HEAD") ? client.readHeadResponse() : client.read();
            if (first != null) {
                assertThat(first.head()).as(what).doesNotContain("X-Poison");
                assertThat(first.body()).as(what).doesNotContain("INJECTED");
            }
            String rest = first == null || "close".equalsIgnoreCase(first.header("Connection")) ? ""
                    : responseText(client.read());
            assertThat(rest).as(what).doesNotContain("INJECTED").doesNotContain("X-Poison");
            if (!rest.isEmpty()) {
                assertThat(rest).as(what + ": the second answer is the second request's").endsWith("GET /next HTTP/1.1");
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}: {3}")
    @MethodSource("shapes")
    void extraBytesAfterAResponseNeverAnswerAnotherClient(Way way, String method, String path, String what) {
        try (RawConnection attacker = bench.open(way)) {
            attacker.send(bench.request(way, method, path));
            RawConnection.Response first = method.equals("HEAD") ? attacker.readHeadResponse() : attacker.read();
            if (first != null) {
                assertThat(first.head() + first.body()).as(what).doesNotContain("X-Poison").doesNotContain("INJECTED");
            }
        }
        for (int i = 0; i < LenientBench.clientsToCoverEveryLoop(); i++) {
            try (RawConnection victim = bench.open(way)) {
                RawConnection.Response r = victim.send(bench.request(way, "GET", "/victim-" + i)).read();
                assertThat(r).as(what + ": victim " + i + " was answered").isNotNull();
                assertThat(r.head()).as(what).doesNotContain("X-Poison");
                assertThat(r.body()).as(what + ": victim " + i).endsWith("GET /victim-" + i + " HTTP/1.1");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("ways")
    void aRefusedResponseShapeIsA502WithItsReason(Way way) {
        for (String path : new String[] {"/switch", "/framing-hop"}) {
            try (RawConnection client = bench.open(way)) {
                RawConnection.Response r = client.send(bench.request(way, "GET", path)).read();
                assertThat(r).as(path).isNotNull();
                assertThat(r.status()).as(path).isEqualTo(502);
                assertThat(r.header("X-Sallyport-Reason")).isEqualTo("upstream_bad_response");
                assertThat(client.readAll()).doesNotContain("INJECTED");
            }
        }
    }

    static Stream<Way> ways() {
        return Stream.of(Way.values());
    }

    static String responseText(RawConnection.Response r) {
        return r == null ? "" : r.head() + r.body();
    }
}
