package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Absolute-form HTTP through the proxy, and the attacker's request shapes (DEFENCES.md classes 1, 2, 4, 5), byte-exact. */
class PlainHttpTest {

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static String target;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        upstream = EchoUpstream.http();
        int port = upstream.port();
        target = "upstream.test:" + port;
        MapResolver resolver = new MapResolver().map("upstream.test", "127.0.0.1")
                .map("mixed.test", "127.0.0.1", "10.0.0.1")
                .map("internal.test", "10.1.2.3");
        String rules = "  - name: upstream\n    hosts: [upstream.test, mixed.test, internal.test, broken.test]\n"
                + "    ports: [" + port + "]\n    methods: [GET, POST, PUT]\n";
        String limits = "  limits: {max_body_bytes: 1000000}\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(null, "127.0.0.1/32:" + port,
                limits, rules), resolver, dir);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    String send(String raw) {
        return RawClient.exchange(proxy.address(), raw);
    }

    @Test
    void absoluteFormGetIsForwardedInOriginFormWithoutProxyHeaders() {
        String response = send("GET http://" + target + "/a/b?secret=1 HTTP/1.1\r\nHost: " + target
                + "\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\nConnection: close\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 200 OK\r\n").contains("GET /a/b?secret=1 host=" + target);
        assertThat(upstream.requests.getLast()).doesNotContainIgnoringCase("proxy-");
        AuditFields ex = proxy.events.await("exchange", f -> "/a/b".equals(f.path()));
        assertThat(ex.status()).isEqualTo(200);
        assertThat(ex.tls()).isEqualTo("none");
        assertThat(proxy.events.events.toString()).doesNotContain("secret=1").doesNotContain("Zm9vOmJhcg");
    }

    @Test
    void keepAliveServesSeveralRequestsAndPostBodiesStream() {
        String body = "x".repeat(70_000);
        int connectionsBefore = upstream.connections.get();
        String response = send("POST http://" + target + "/one HTTP/1.1\r\nHost: " + target + "\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body
                + "POST http://" + target + "/two HTTP/1.1\r\nHost: " + target
                + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\n\r\n");
        assertThat(response).contains("POST /one host=" + target + " len=70000")
                .contains("POST /two host=" + target + " len=8\nhelloabc");
        assertThat(upstream.connections.get() - connectionsBefore).as("pooled upstream connection reused").isEqualTo(1);
    }

    static Stream<Arguments> smuggling() {
        String h = "Host: upstream.test:PORT\r\n";
        String get = "GET http://upstream.test:PORT/ HTTP/1.1\r\n";
        String post = "POST http://upstream.test:PORT/ HTTP/1.1\r\n";
        return Stream.of(
                Arguments.of("cl_with_te", post + h + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                        400, "content_length_with_transfer_encoding"),
                Arguments.of("duplicate_cl", post + h + "Content-Length: 1\r\nContent-Length: 1\r\n\r\nA", 400,
                        "duplicate_content_length"),
                Arguments.of("conflicting_cl_list", post + h + "Content-Length: 1, 2\r\n\r\nA", 400,
                        "invalid_content_length"),
                Arguments.of("plus_cl", post + h + "Content-Length: +1\r\n\r\nA", 400, "invalid_content_length"),
                Arguments.of("bad_chunk_size", post + h + "Transfer-Encoding: chunked\r\n\r\nzz\r\nA\r\n0\r\n\r\n", 400,
                        "bad_chunk_size"),
                Arguments.of("negative_chunk", post + h + "Transfer-Encoding: chunked\r\n\r\n-1\r\nA\r\n0\r\n\r\n", 400,
                        "bad_chunk_size"),
                Arguments.of("chunk_no_crlf", post + h + "Transfer-Encoding: chunked\r\n\r\n1\r\nAB0\r\n\r\n", 400,
                        "bad_chunk_framing"),
                Arguments.of("te_not_chunked", post + h + "Transfer-Encoding: gzip\r\n\r\n", 400,
                        "unsupported_transfer_encoding"),
                Arguments.of("te_chunked_not_final", post + h + "Transfer-Encoding: chunked, identity\r\n\r\n", 400,
                        "unsupported_transfer_encoding"),
                Arguments.of("te_twice", post + h + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                        400, "duplicate_transfer_encoding"),
                Arguments.of("obs_fold", get + h + "X-A: 1\r\n continued\r\n\r\n", 400, "obs_fold"),
                Arguments.of("bare_lf", get + h + "X-A: 1\n\r\n", 400, "bare_lf"),
                Arguments.of("bare_cr", get + h + "X-A: 1\rX-B: 2\r\n\r\n", 400, "bare_cr"),
                Arguments.of("space_before_colon", get + h + "X-A : 1\r\n\r\n", 400, "invalid_header_name"),
                Arguments.of("nul_in_header", get + h + "X-A: a\0b\r\n\r\n", 400, "control_character"),
                Arguments.of("two_hosts", get + h + h + "\r\n", 400, "duplicate_host"),
                Arguments.of("h2c_upgrade", get + h + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                        + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", 400, "h2c_refused"),
                Arguments.of("long_line", "GET http://upstream.test:PORT/" + "a".repeat(9000) + " HTTP/1.1\r\n" + h
                        + "\r\n", 414, "request_line_too_long"),
                Arguments.of("huge_headers", get + h + ("X-Pad: " + "b".repeat(1000) + "\r\n").repeat(40) + "\r\n", 431,
                        "headers_too_large"),
                Arguments.of("body_over_cap", post + h + "Content-Length: 2000000\r\n\r\n", 413, "body_too_large"),
                Arguments.of("http09_style", "GET http://upstream.test:PORT/\r\n\r\n", 400, "malformed_request_line"),
                Arguments.of("double_space", "GET  http://upstream.test:PORT/ HTTP/1.1\r\n" + h + "\r\n", 400,
                        "malformed_request_line"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("smuggling")
    void smugglingShapesAreRefusedBeforeReachingTheUpstream(String name, String raw, int status, String reason) {
        int before = upstream.requests.size();
        String response = send(raw.replace("PORT", String.valueOf(upstream.port())));
        assertThat(response).startsWith("HTTP/1.1 " + status + " ")
                .contains("\r\nX-Sallyport-Reason: " + reason + "\r\n").contains("\r\nconnection: close\r\n");
        assertThat(upstream.requests).hasSize(before);
    }

    @Test
    void hostHeaderThatDisagreesWithTheAbsoluteUrlIsRefused() {
        String response = send("GET http://" + target + "/ HTTP/1.1\r\nHost: evil.example\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: host_mismatch");
    }

    @Test
    void userinfoInTheUrlIsRefused() {
        String response = send("GET http://upstream.test@evil.example:" + upstream.port()
                + "/ HTTP/1.1\r\nHost: evil.example\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: userinfo_in_authority");
    }

    @Test
    void nameTricksReachTheEngineNormalizedOrAreRefused() {
        String upper = send("GET http://UPSTREAM.Test.:" + upstream.port() + "/ HTTP/1.1\r\nHost: upstream.test:"
                + upstream.port() + "\r\nConnection: close\r\n\r\n");
        assertThat(upper).startsWith("HTTP/1.1 200 ");
        String suffix = send("GET http://upstream.test.evil.example:" + upstream.port() + "/ HTTP/1.1\r\nHost: "
                + "upstream.test.evil.example:" + upstream.port() + "\r\n\r\n");
        assertThat(suffix).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: no_matching_rule");
        String octal = send("GET http://0177.0.0.1:" + upstream.port() + "/ HTTP/1.1\r\nHost: 0177.0.0.1:"
                + upstream.port() + "\r\n\r\n");
        assertThat(octal).startsWith("HTTP/1.1 40");
        assertThat(octal).doesNotContain("200 OK");
    }

    @Test
    void aNameWithOneDeniedAddressAmongAllowedOnesIsDenied() {
        String response = send("GET http://mixed.test:" + upstream.port() + "/ HTTP/1.1\r\nHost: mixed.test:"
                + upstream.port() + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
        AuditFields ex = proxy.events.await("exchange", f -> "private_address".equals(f.reason())
                && "mixed.test".equals(f.host()));
        assertThat(ex.decision()).isEqualTo("deny");
    }

    @Test
    void aNameResolvingToAPrivateAddressIsDeniedBeforeDialing() {
        String response = send("GET http://internal.test:" + upstream.port() + "/ HTTP/1.1\r\nHost: internal.test:"
                + upstream.port() + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
    }

    @Test
    void aNameThatDoesNotResolveGets502() {
        String response = send("GET http://broken.test:" + upstream.port() + "/ HTTP/1.1\r\nHost: broken.test:"
                + upstream.port() + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 502 ").contains("X-Sallyport-Reason: dns_failed")
                .contains("=> broken.test:" + upstream.port() + ": DNS lookup failed");
    }

    @Test
    void methodOutsideTheRuleIsDenied() {
        String response = send("DELETE http://" + target + "/x HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: method_not_allowed");
    }
}
