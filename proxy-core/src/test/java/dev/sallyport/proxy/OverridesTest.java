package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LenientBench;
import dev.sallyport.proxy.testing.LenientBench.Way;
import dev.sallyport.proxy.testing.RawConnection;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Method and URL override headers from the attacker's side: a host whose rule allows only reads of {@code /public}
 * must not be made to delete, or to serve {@code /admin}, by a header that the backend honours after the proxy
 * decided on the request line. Honest overrides the policy allows still pass, header intact.
 */
class OverridesTest {

    static LenientBench bench;

    @BeforeAll
    static void start() throws Exception {
        bench = new LenientBench(LenientUpstream::echo, "  - name: reads\n    hosts: [up.test]\n    ports: [PORTS]\n"
                + "    methods: [GET, HEAD, POST]\n    paths: [\"/public/**\"]\n");
    }

    @AfterAll
    static void stop() {
        bench.close();
    }

    static String request(Way way, String method, String path, String header) {
        return method + " " + bench.target(way, path) + " HTTP/1.1\r\nHost: " + bench.host(way) + "\r\n" + header
                + "\r\nContent-Length: 0\r\n\r\n";
    }

    static Stream<Arguments> denied() {
        return Stream.of(Way.values()).flatMap(w -> Stream.of(
                Arguments.of(w, "POST", "X-HTTP-Method-Override: DELETE", 403, "method_override_denied"),
                Arguments.of(w, "POST", "X-HTTP-Method-Override: delete", 403, "method_override_denied"),
                Arguments.of(w, "POST", "X-HTTP-Method: PUT", 403, "method_override_denied"),
                Arguments.of(w, "GET", "X-Method-Override: PATCH", 403, "method_override_denied"),
                Arguments.of(w, "GET", "X-Original-URL: /admin/users", 403, "url_override_denied"),
                Arguments.of(w, "GET", "X-Rewrite-URL: /public/../admin", 403, "url_override_denied"),
                Arguments.of(w, "GET", "X-Original-URL: /public/%2e%2e/admin", 403, "url_override_denied"),
                Arguments.of(w, "GET", "X-Original-URL: http://up.test/admin", 400, "invalid_override"),
                Arguments.of(w, "GET", "X-HTTP-Method-Override: DE LETE", 400, "invalid_override")));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("denied")
    void anOverrideThePolicyWouldDenyIsRefusedAndNeverReachesTheUpstream(Way way, String method, String header,
                                                                       int status, String reason) {
        String path = "/public/override-" + Integer.toHexString(header.hashCode()) + way;
        try (RawConnection client = bench.open(way)) {
            RawConnection.Response r = client.send(request(way, method, path, header)).read();
            assertThat(r).as(header).isNotNull();
            assertThat(r.status()).as(header).isEqualTo(status);
            assertThat(r.header("X-Sallyport-Reason")).isEqualTo(reason);
        }
        assertThat(bench.upstream(way).received()).noneMatch(q -> q.requestLine().contains(path));
        bench.events.await("request", f -> path.equals(f.path()) && reason.equals(f.reason())
                && "deny".equals(f.decision()));
    }

    @ParameterizedTest
    @MethodSource("ways")
    void anOverrideThePolicyAllowsPassesWithItsHeader(Way way) {
        try (RawConnection client = bench.open(way)) {
            assertThat(client.send(request(way, "POST", "/public/ok", "X-HTTP-Method-Override: GET")).read().status())
                    .isEqualTo(200);
            assertThat(client.send(request(way, "GET", "/public/ok2", "X-Original-URL: /public/other")).read()
                    .status()).isEqualTo(200);
        }
        assertThat(LenientBench.find(bench.upstream(way), "/public/ok").header("X-HTTP-Method-Override"))
                .isEqualTo("GET");
        assertThat(LenientBench.find(bench.upstream(way), "/public/ok2").header("X-Original-URL"))
                .isEqualTo("/public/other");
    }

    static Stream<Way> ways() {
        return Stream.of(Way.values());
    }
}
