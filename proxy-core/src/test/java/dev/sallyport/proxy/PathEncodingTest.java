package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Trust;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression (issue 11 item 9): double-encoded dot segments ({@code /public/%252e%252e/private/x}, 14 of 16
 * forms) reached a host whose rule allows only {@code /public/**}, because backends that decode twice read
 * {@code /private/x}. Through the real proxy, by URL to a plain HTTP upstream and inside an intercepted
 * tunnel to an HTTPS one: each spelling is refused and the upstream never sees it.
 */
class PathEncodingTest {

    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("files.test");
        String rules = "  - name: no-secret\n    action: deny\n    hosts: [files.test]\n    ports: [" + up.plain.port()
                + ", " + up.tls.port() + "]\n    paths: [\"/public/secret/**\"]\n"
                + "  - name: public\n    hosts: [files.test]\n    ports: [" + up.plain.port() + ", " + up.tls.port()
                + "]\n    paths: [\"/public/**\"]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, "files.test:" + up.plain.port()
                + ", files.test:" + up.tls.port(), "", rules), new MapResolver().map("files.test", "127.0.0.1"), up.dir);
        trust = Trust.of(proxy.caPem);
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/public/%252e%252e/private/x", "/public/%252E%252E/private/x", "/public/%252e%252E/private/x",
        "/public/.%252e/private/x", "/public/%252e./private/x", "/public/%25252e%25252e/private/x",
        "/public/%252e%252e%252fprivate/x", "/public/..%252fprivate/x", "/public/..%252Fprivate/x",
        "/public/..%255cprivate/x", "/public/%252e%252e%255cprivate/x", "/public/%25%32%65%25%32%65/private/x",
        "/public/%25%32%45%25%32%45/private/x", "/public/%2525%32%65%2525%32%65/private/x",
        "/public/%25u002e%25u002e/private/x", "/public/%c0%ae%c0%ae/private/x", "/public/%25c0%25ae%25c0%25ae/private/x",
        "/public/%e0%80%ae%e0%80%ae/private/x", "/public/..%253b/private/x", "/public/..%2500/private/x",
        "/public/..%3f/private/x", "/public/secret;x/y", "/public/secret%3f/../y", "/public/x/..%2523/../private",
    })
    void aSpellingThatABackendReadsOutsideTheAllowedTreeNeverReachesIt(String path) {
        int before = up.requests();
        String byUrl = RawClient.exchange(proxy.address(), "GET http://files.test:" + up.plain.port() + path
                + " HTTP/1.1\r\nHost: files.test:" + up.plain.port() + "\r\n\r\n");
        assertRefused(byUrl, path);
        String inTunnel = RawClient.throughTunnel(proxy.address(), trust, "files.test", up.tls.port(), "GET " + path
                + " HTTP/1.1\r\nHost: files.test:" + up.tls.port() + "\r\nConnection: close\r\n\r\n");
        assertRefused(inTunnel, path);
        assertThat(up.requests()).as("requests the upstreams saw").isEqualTo(before);
    }

    @Test
    void theAllowedTreeStillWorksThroughBothPaths() {
        String byUrl = RawClient.exchange(proxy.address(), "GET http://files.test:" + up.plain.port()
                + "/public/a%2520b/./c HTTP/1.1\r\nHost: files.test:" + up.plain.port() + "\r\nConnection: close\r\n\r\n");
        assertThat(byUrl).startsWith("HTTP/1.1 200 ").contains("GET /public/a%2520b/./c host=files.test");
        String inTunnel = RawClient.throughTunnel(proxy.address(), trust, "files.test", up.tls.port(),
                "GET /public/x/../ok;v=2 HTTP/1.1\r\nHost: files.test:" + up.tls.port() + "\r\nConnection: close\r\n\r\n");
        assertThat(inTunnel).startsWith("HTTP/1.1 200 ").contains("GET /public/x/../ok;v=2 host=files.test");
    }

    private static void assertRefused(String answer, String path) {
        assertThat(answer).as(path).startsWith("HTTP/1.1 403 ")
                .containsPattern("X-Sallyport-Reason: (invalid_path|path_not_allowed|denied_by_rule)");
        assertThat(answer).doesNotContain("host=files.test");
    }
}
