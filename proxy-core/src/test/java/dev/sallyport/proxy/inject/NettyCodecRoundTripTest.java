package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static dev.sallyport.proxy.inject.Fixtures.env;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scrubber between Netty's real HTTP/1.1 codecs: upstream wire bytes (chunked, gzip, value in a
 * header, the body and a trailer) arrive one byte at a time, are decoded, scrubbed and encoded again
 * for the client; every byte on the client's wire is searched.
 */
class NettyCodecRoundTripTest {

    /** What a data-path handler does: one call per HttpObject. */
    private static final class ScrubDecoder extends MessageToMessageDecoder<HttpObject> {
        private final ResponseScrubber scrubber;

        ScrubDecoder(ResponseScrubber scrubber) {
            this.scrubber = scrubber;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, HttpObject msg, List<Object> out) throws Exception {
            io.netty.util.ReferenceCountUtil.retain(msg);   // the decoder releases msg after decode(); scrub() takes ownership
            scrubber.scrub(msg, out);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void wireBytesToTheClientNeverHoldTheValue(boolean gzip) throws Exception {
        String value = Fixtures.awkwardToken();
        SecretStore store = Fixtures.store(Map.of("T", value), env("T", List.of("api.example.com"), List.of("Authorization")));
        HttpHeaders request = new DefaultHttpHeaders().add("Authorization", "Bearer " + store.placeholders().get("T"));
        ExchangeSecrets exchange = store.exchange("api.example.com");
        exchange.inject(request, "/");
        String echoed = request.get("Authorization");
        assertThat(echoed).contains(value);

        byte[] payload = bytes(("{\"you_sent\":\"" + echoed.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\"b64\":\""
                + Base64.getEncoder().encodeToString(bytes(echoed)) + "\"}\n").repeat(20));
        byte[] body = gzip ? ResponseScrubberTest.gzip(payload) : payload;
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.writeBytes(bytes("HTTP/1.1 200 " + "OK\r\nX-Echo: " + echoed + "\r\nTransfer-Encoding: chunked\r\n"
                + (gzip ? "Content-Encoding: gzip\r\n" : "") + "Trailer: X-Sig\r\n\r\n"));
        for (int i = 0; i < body.length; i += 100) {
            int n = Math.min(100, body.length - i);
            wire.writeBytes(bytes(Integer.toHexString(n) + "\r\n"));
            wire.write(body, i, n);
            wire.writeBytes(bytes("\r\n"));
        }
        wire.writeBytes(bytes("0\r\nX-Sig: " + value + "\r\n\r\n"));

        try (ResponseScrubber scrubber = exchange.responseScrubber(io.netty.buffer.ByteBufAllocator.DEFAULT, 1 << 20)) {
            EmbeddedChannel upstream = new EmbeddedChannel(new HttpResponseDecoder(), new ScrubDecoder(scrubber));
            EmbeddedChannel client = new EmbeddedChannel(new HttpResponseEncoder());
            for (byte b : wire.toByteArray()) {
                upstream.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
                Object o;
                while ((o = upstream.readInbound()) != null) {
                    client.writeOutbound(o);
                }
            }
            ByteArrayOutputStream seen = new ByteArrayOutputStream();
            ByteBuf out;
            while ((out = client.readOutbound()) != null) {
                byte[] b = new byte[out.readableBytes()];
                out.readBytes(b);
                seen.writeBytes(b);
                out.release();
            }
            assertThat(upstream.finishAndReleaseAll()).isFalse();
            assertThat(client.finishAndReleaseAll()).isFalse();
            String text = seen.toString(StandardCharsets.ISO_8859_1);
            assertThat(text).contains("[sallyport:redacted]").contains("X-Sig: [sallyport:").doesNotContain("Content-Encoding");
            byte[] all = seen.toByteArray();
            for (byte[] form : Fixtures.forbiddenForms(value)) {
                assertThat(Fixtures.contains(all, form)).isFalse();
            }
            assertThat(Fixtures.contains(all, bytes(Base64.getEncoder().encodeToString(bytes(echoed))))).isFalse();
        }
    }
}
