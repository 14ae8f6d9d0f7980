package dev.sallyport.proxy.websocket;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.inject.ExchangeSecrets;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.SecretStore;
import dev.sallyport.proxy.testing.WsFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The two WebSocket handlers on an {@link EmbeddedChannel}, fed one byte at a time. */
class MessageHandlersTest {

    static final String VALUE = "handler-real-value-0123456789abcdef";
    static final String PLACEHOLDER = "sallyport-ph-handlertestplaceholder1";

    static ExchangeSecrets secrets(String host) throws Exception {
        SecretSpec spec = new SecretSpec("TOKEN", 1, new SecretSource.Env("TOKEN"),
                List.of(HostPattern.parse("api.example.com")), List.of("Authorization"), PLACEHOLDER, false, false, false);
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 7);
        SecretStore store = SecretStore.load(List.of(spec), Placeholders.withKey(key), Map.of("TOKEN", VALUE)::get,
                InstantSource.system());
        return store.exchange(host);
    }

    static void feedByteByByte(EmbeddedChannel ch, byte[] stream) {
        for (byte b : stream) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
        }
    }

    static byte[] drainInbound(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuf b; (b = ch.readInbound()) != null; ) {
            out.writeBytes(ByteBufUtil.getBytes(b));
            b.release();
        }
        return out.toByteArray();
    }

    @Test
    void aValueSplitOverOneByteReadsAndFragmentsIsReplacedAndFramedAgain() throws Exception {
        ExchangeSecrets secrets = secrets("other.example.com");
        EmbeddedChannel ch = new EmbeddedChannel(new MessageScrubHandler(
                () -> secrets.responseScrubber(ByteBufAllocator.DEFAULT, 1024)));
        byte[] text = ("v=" + VALUE + ".").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int i = 0; i < text.length; i += 4) {
            int end = Math.min(text.length, i + 4);
            stream.writeBytes(WsFrames.frame(end == text.length, i == 0 ? WsFrames.TEXT : WsFrames.CONTINUATION,
                    Arrays.copyOfRange(text, i, end)));
            if (i == 8) {
                stream.writeBytes(WsFrames.text(true, WsFrames.PING, VALUE));
            }
        }
        feedByteByByte(ch, stream.toByteArray());
        ByteArrayInputStream out = new ByteArrayInputStream(drainInbound(ch));
        ByteArrayOutputStream message = new ByteArrayOutputStream();
        List<Integer> opcodes = new ArrayList<>();
        WsFrames.Frame f;
        do {
            f = WsFrames.read(out);
            opcodes.add(f.opcode());
            if (f.opcode() == WsFrames.PING) {
                assertThat(f.text()).doesNotContain(VALUE).hasSize(VALUE.length());
            } else {
                message.writeBytes(f.payload());
            }
        } while (!f.fin() || f.opcode() == WsFrames.PING);
        assertThat(out.available()).isZero();
        assertThat(opcodes.getFirst()).isEqualTo(WsFrames.TEXT);
        assertThat(opcodes.subList(1, opcodes.size())).containsOnly(WsFrames.CONTINUATION, WsFrames.PING)
                .contains(WsFrames.PING);
        assertThat(message.toString(StandardCharsets.UTF_8)).startsWith("v=").endsWith(".").doesNotContain(VALUE)
                .hasSize(text.length);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void bytesHeldBackInAMessageTheServerNeverFinishedAreDropped() throws Exception {
        ExchangeSecrets secrets = secrets("other.example.com");
        EmbeddedChannel ch = new EmbeddedChannel(new MessageScrubHandler(
                () -> secrets.responseScrubber(ByteBufAllocator.DEFAULT, 1024)));
        byte[] start = ("x " + VALUE.substring(0, 20)).getBytes(StandardCharsets.UTF_8);
        ch.writeInbound(Unpooled.wrappedBuffer(WsFrames.frame(false, WsFrames.TEXT, start)));
        byte[] sent = drainInbound(ch);
        assertThat(new String(sent, StandardCharsets.UTF_8)).doesNotContain(VALUE.substring(0, 20));
        ch.close();
        assertThat(drainInbound(ch)).isEmpty();
    }

    @Test
    void aPlaceholderSplitOverMaskedFragmentsClosesWith1008AndStopsForwarding() throws Exception {
        ExchangeSecrets secrets = secrets("other.example.com");
        EmbeddedChannel upstream = new EmbeddedChannel();
        List<Refused> refused = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new MessageGuardHandler(secrets::messageGuard, refused::add, upstream));
        byte[] text = ("t=" + PLACEHOLDER).getBytes(StandardCharsets.UTF_8);
        int half = text.length / 2;
        byte[] first = WsFrames.masked(false, WsFrames.TEXT, Arrays.copyOf(text, half), new byte[] {1, 2, 3, 4});
        byte[] second = WsFrames.masked(true, WsFrames.CONTINUATION, Arrays.copyOfRange(text, half, text.length),
                new byte[] {5, 6, 7, 8});
        ch.writeInbound(Unpooled.wrappedBuffer(first));
        assertThat(drainInbound(ch)).as("the first fragment waits until its message is judged whole").isEmpty();
        ch.writeInbound(Unpooled.wrappedBuffer(second));
        assertThat(drainInbound(ch)).as("neither fragment of a refused message goes on").isEmpty();
        assertThat(refused).containsExactly(new Refused("secret_wrong_host", "TOKEN", "websocket message"));
        ByteBuf close = ch.readOutbound();
        WsFrames.Frame f = WsFrames.read(new ByteArrayInputStream(ByteBufUtil.getBytes(close)));
        close.release();
        assertThat(f.closeCode()).isEqualTo(1008);
        assertThat(f.masked()).isFalse();
        assertThat(ch.isOpen()).isFalse();
        assertThat(upstream.isOpen()).isFalse();
    }

    @Test
    void aCleanMessageInFragmentsGoesOnWholeOnceItsLastFragmentArrives() throws Exception {
        ExchangeSecrets secrets = secrets("other.example.com");
        EmbeddedChannel upstream = new EmbeddedChannel();
        EmbeddedChannel ch = new EmbeddedChannel(new MessageGuardHandler(secrets::messageGuard, r -> { }, upstream));
        byte[] first = WsFrames.masked(false, WsFrames.TEXT, "hello ".getBytes(StandardCharsets.UTF_8),
                new byte[] {1, 2, 3, 4});
        byte[] second = WsFrames.masked(true, WsFrames.CONTINUATION, "world".getBytes(StandardCharsets.UTF_8),
                new byte[] {5, 6, 7, 8});
        ch.writeInbound(Unpooled.wrappedBuffer(first));
        assertThat(drainInbound(ch)).isEmpty();
        ch.writeInbound(Unpooled.wrappedBuffer(second));
        byte[] both = new byte[first.length + second.length];
        System.arraycopy(first, 0, both, 0, first.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        assertThat(drainInbound(ch)).as("both fragments, unchanged, in order").isEqualTo(both);
        ch.finishAndReleaseAll();
        upstream.finishAndReleaseAll();
    }

    @Test
    void aPlaceholderInAPingIsRefusedToo() throws Exception {
        ExchangeSecrets secrets = secrets("other.example.com");
        List<Refused> refused = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new MessageGuardHandler(secrets::messageGuard, refused::add,
                new EmbeddedChannel()));
        feedByteByByte(ch, WsFrames.masked(true, WsFrames.PING, PLACEHOLDER.getBytes(StandardCharsets.US_ASCII),
                new byte[] {9, 9, 9, 9}));
        assertThat(refused).singleElement().satisfies(r -> assertThat(r.reason()).isEqualTo("secret_wrong_host"));
        ch.finishAndReleaseAll();
    }
}
