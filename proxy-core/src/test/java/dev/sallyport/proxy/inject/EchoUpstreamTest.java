package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static dev.sallyport.proxy.inject.Fixtures.env;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.inject.InjectionResult.Injected;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.ByteArrayOutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The attacker's view: the sandbox sends placeholders to an allowed host that reflects everything it
 * receives (headers into headers and into the body, raw, base64, percent-encoded and JSON-escaped),
 * in one-byte chunks, gzip-compressed or not. Every byte the client gets is searched for the value in
 * all its forms.
 */
class EchoUpstreamTest {

    /** A fake upstream: reflects request headers into response headers and a body in many encodings. */
    private static HttpResponse echoHead(HttpHeaders request) {
        HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        request.forEach(h -> r.headers().add("X-Echo-" + h.getKey(), h.getValue()));
        return r;
    }

    private static byte[] echoBody(HttpHeaders request) {
        StringBuilder sb = new StringBuilder("{\"headers\":{");
        request.forEach(h -> sb.append('"').append(h.getKey()).append("\":\"")
                .append(h.getValue().replace("\\", "\\\\").replace("\"", "\\\"").replace("/", "\\/")).append("\","));
        sb.append("},\"b64\":[");
        request.forEach(h -> sb.append('"').append(Base64.getEncoder().encodeToString(
                (h.getKey() + ": " + h.getValue()).getBytes(StandardCharsets.ISO_8859_1))).append("\","));
        request.forEach(h -> sb.append('"').append(Base64.getUrlEncoder().withoutPadding().encodeToString(
                ("xx" + h.getValue()).getBytes(StandardCharsets.ISO_8859_1))).append("\","));
        sb.append("],\"query\":\"");
        request.forEach(h -> sb.append(URLEncoder.encode(h.getValue(), StandardCharsets.UTF_8)).append('&'));
        sb.append("\"}\n");
        return bytes(sb.toString().repeat(3));
    }

    @ParameterizedTest(name = "gzip={0} chunk={1}")
    @CsvSource({"false,1", "true,1", "false,7", "true,4096"})
    void nothingComesBack(boolean gzip, int chunk) throws Exception {
        String basicValue = Fixtures.awkwardToken();
        String bearerValue = Fixtures.token("npm_");
        String keyValue = Fixtures.token("sk-ant-");
        SecretStore store = Fixtures.store(Map.of("GIT", basicValue, "NPM", bearerValue, "KEY", keyValue),
                env("GIT", List.of("echo.example.com"), List.of("Authorization")),
                env("NPM", List.of("echo.example.com"), List.of("X-Npm-Auth")),
                env("KEY", List.of("echo.example.com"), List.of("X-Api-Key")));
        Map<String, String> ph = store.placeholders();

        HttpHeaders request = new DefaultHttpHeaders()
                .add("Host", "echo.example.com")
                .add("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                        ("x-access-token:" + ph.get("GIT")).getBytes(StandardCharsets.US_ASCII)))
                .add("X-Npm-Auth", "Bearer " + ph.get("NPM"))
                .add("X-Api-Key", ph.get("KEY"))
                .add("Accept-Encoding", "gzip");
        ExchangeSecrets exchange = store.exchange("echo.example.com");
        assertThat(exchange.inject(request, "/anything")).isEqualTo(new Injected(List.of("GIT", "NPM", "KEY")));
        // what the upstream received holds the real values: the test is meaningful
        assertThat(request.get("X-Api-Key")).isEqualTo(keyValue);

        HttpResponse head = echoHead(request);
        byte[] body = echoBody(request);
        if (gzip) {
            body = ResponseScrubberTest.gzip(body);
            head.headers().set("Content-Encoding", "gzip");
        }
        head.headers().set("Content-Length", body.length);

        List<Object> out = new ArrayList<>();
        try (ResponseScrubber scrubber = exchange.responseScrubber(ByteBufAllocator.DEFAULT, 16L << 20)) {
            scrubber.scrub(head, out);
            for (int i = 0; i < body.length; i += chunk) {
                scrubber.scrub(new DefaultHttpContent(Unpooled.wrappedBuffer(body, i, Math.min(chunk, body.length - i))), out);
            }
            scrubber.scrub(LastHttpContent.EMPTY_LAST_CONTENT, out);
        }

        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        HttpResponse sentHead = (HttpResponse) out.getFirst();
        seen.writeBytes(bytes(sentHead.status().toString()));
        sentHead.headers().forEach(h -> seen.writeBytes(bytes(h.getKey() + ": " + h.getValue() + "\r\n")));
        for (Object o : out) {
            if (o instanceof HttpContent c) {
                byte[] b = new byte[c.content().readableBytes()];
                c.content().readBytes(b);
                seen.writeBytes(b);
                c.release();
            }
        }
        byte[] all = seen.toByteArray();
        assertThat(all.length).isGreaterThan(1000);
        assertThat(new String(all, StandardCharsets.ISO_8859_1)).contains("[sallyport:redacted]");
        for (String v : List.of(basicValue, bearerValue, keyValue)) {
            for (byte[] form : Fixtures.forbiddenForms(v)) {
                assertThat(Fixtures.contains(all, form)).as("a form of a secret came back").isFalse();
            }
            // and through decoding: no base64 run in the output decodes to something holding the value
            assertThat(anyBase64RunHolds(all, bytes(v))).isFalse();
        }
        String sentCredential = Base64.getEncoder().encodeToString(
                ("x-access-token:" + basicValue).getBytes(StandardCharsets.ISO_8859_1));
        assertThat(Fixtures.contains(all, bytes(sentCredential))).isFalse();
    }

    /** Decodes every maximal run of base64 characters at each of its 4 offsets and looks for the value. */
    private static boolean anyBase64RunHolds(byte[] all, byte[] value) {
        int i = 0;
        while (i < all.length) {
            int j = i;
            while (j < all.length && isB64(all[j])) {
                j++;
            }
            for (int off = 0; off < 4 && i + off < j; off++) {
                int len = (j - i - off) / 4 * 4;
                if (len >= 4) {
                    String run = new String(all, i + off, len, StandardCharsets.ISO_8859_1).replace('-', '+').replace('_', '/');
                    try {
                        if (Fixtures.contains(Base64.getDecoder().decode(run), value)) {
                            return true;
                        }
                    } catch (IllegalArgumentException ignored) {
                        // not valid at this offset
                    }
                }
            }
            i = j + 1;
        }
        return false;
    }

    private static boolean isB64(byte b) {
        return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '+' || b == '/'
                || b == '-' || b == '_';
    }
}
