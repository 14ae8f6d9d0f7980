package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static dev.sallyport.proxy.inject.Fixtures.contains;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.inject.PatternSet.Kind;
import dev.sallyport.proxy.inject.PatternSet.Pattern;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StreamRedactorTest {

    private static PatternSet set(String... patterns) {
        List<Pattern> list = new ArrayList<>();
        for (String p : patterns) {
            list.add(new Pattern(bytes(p), 0, Kind.VALUE));
        }
        return new PatternSet(list);
    }

    private static byte[] stream(PatternSet set, byte[] input, int chunk) {
        StreamRedactor r = new StreamRedactor(set, PatternSet.EMPTY);
        ByteBuf out = Unpooled.buffer();
        for (int i = 0; i < input.length; i += chunk) {
            r.feed(input, i, Math.min(chunk, input.length - i), out);
        }
        r.finish(out);
        byte[] result = new byte[out.readableBytes()];
        out.readBytes(result);
        out.release();
        return result;
    }

    @Test
    void replacesWithMarkerOfTheSameLength() {
        byte[] out = stream(set("hunter2hunter2"), bytes("pw=hunter2hunter2;"), 1000);
        assertThat(new String(out, StandardCharsets.US_ASCII)).isEqualTo("pw=[sallyport:red;");
    }

    @Test
    void longRunsRepeatTheMarker() {
        String secret = "x".repeat(45);
        byte[] out = stream(set(secret), bytes("<" + secret + ">"), 7);
        assertThat(new String(out, StandardCharsets.US_ASCII))
                .isEqualTo("<[sallyport:redacted][sallyport:redacted][sall>");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5, 13, 64, 16 * 1024 + 3})
    void matchesSplitAcrossChunksAreFound(int chunk) {
        String secret = "ghp_" + "a1b2c3d4e5".repeat(3);
        String text = ("lorem " + secret + " ipsum ").repeat(50) + secret;
        byte[] out = stream(set(secret), bytes(text), chunk);
        assertThat(out).hasSize(text.length());
        assertThat(contains(out, bytes(secret))).isFalse();
        assertThat(new String(out, StandardCharsets.US_ASCII)).startsWith("lorem [sallyport:redacted]");
    }

    @Test
    void matchAtVeryEndAndVeryStartOfStream() {
        byte[] out = stream(set("abcdefgh"), bytes("abcdefgh--abcdefgh"), 1);
        assertThat(new String(out, StandardCharsets.US_ASCII)).isEqualTo("[sallypo--[sallypo");
    }

    @Test
    void overlappingPatternsRedactTheUnion() {
        // "BBBBCCCC" starts inside "AAAABBBB": leftmost-only matching would leave CCCC visible.
        byte[] out = stream(set("AAAABBBB", "BBBBCCCC"), bytes("..AAAABBBBCCCC.."), 1);
        assertThat(new String(out, StandardCharsets.US_ASCII)).isEqualTo("..[sallyport:r..");
    }

    @Test
    void randomChunkingAgreesWithOneShot() {
        Random rnd = new Random(42);
        PatternSet set = set("secret-one-1234", "zz", "another/secret+value");
        for (int round = 0; round < 200; round++) {
            StringBuilder sb = new StringBuilder();
            String[] pieces = {"secret-one-1234", "zz", "another/secret+value", "secret-one", "z", "abc", "\n"};
            for (int i = 0; i < 40; i++) {
                sb.append(pieces[rnd.nextInt(pieces.length)]);
            }
            byte[] input = bytes(sb.toString());
            byte[] expected = StreamRedactor.redactAll(set, PatternSet.EMPTY, input);
            byte[] got = stream(set, input, 1 + rnd.nextInt(20));
            assertThat(got).isEqualTo(expected);
        }
    }

    @Test
    void holdsBackOnlyWhatCouldStartAMatch() throws Exception {
        StreamRedactor r = new StreamRedactor(set("0123456789abcdef"), PatternSet.EMPTY);
        var carried = StreamRedactor.class.getDeclaredField("carried");
        carried.setAccessible(true);
        ByteBuf out = Unpooled.buffer();
        byte[] big = new byte[1 << 20];
        r.feed(big, 0, big.length, out);
        assertThat(out.readableBytes()).as("nothing that cannot start a secret is delayed").isEqualTo(big.length);
        byte[] sse = bytes("data: {\"delta\":\"hi\"}\n\n");
        r.feed(sse, 0, sse.length, out);
        assertThat(out.readableBytes()).isEqualTo(big.length + sse.length);
        byte[] tail = bytes("xx0123456789abcde");   // one byte short of the pattern
        r.feed(tail, 0, tail.length, out);
        assertThat(carried.getInt(r)).isEqualTo(15);
        assertThat(out.readableBytes()).isEqualTo(big.length + sse.length + 2);
        r.feed(bytes("f"), 0, 1, out);
        r.finish(out);
        byte[] all = new byte[out.readableBytes()];
        out.readBytes(all);
        out.release();
        assertThat(new String(all, big.length + sse.length, 18, StandardCharsets.US_ASCII)).isEqualTo("xx[sallyport:redac");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void base64OfTheValueInsideLongerBase64IsFoundAtEveryAlignment(int prefixBytes) {
        byte[] value = bytes(Fixtures.awkwardToken());
        List<Pattern> list = new ArrayList<>();
        for (byte[] f : StorePatterns.valueForms(value)) {
            list.add(new Pattern(f, 0, Kind.VALUE));
        }
        PatternSet set = new PatternSet(list);
        for (int suffix = 0; suffix < 3; suffix++) {
            byte[] plain = new byte[prefixBytes + 7 + value.length + suffix];
            Fixtures.RANDOM.nextBytes(plain);
            System.arraycopy(value, 0, plain, prefixBytes + 7, value.length);
            for (Base64.Encoder enc : List.of(Base64.getEncoder(), Base64.getUrlEncoder())) {
                byte[] encoded = enc.encode(plain);
                byte[] out = stream(set, encoded, 1);
                assertThat(out).isNotEqualTo(encoded);
                assertThat(Base64.getDecoder().decode(reencodeTolerant(out, encoded)))
                        .as("decoded output must not hold the value").satisfies(d -> assertThat(contains(d, value)).isFalse());
            }
        }
    }

    /** Replaces marker bytes with 'A' so the result decodes, to show the value's bits are gone. */
    private static byte[] reencodeTolerant(byte[] out, byte[] original) {
        byte[] copy = out.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] != original[i]) {
                copy[i] = 'A';
            }
            if (copy[i] == '-') {
                copy[i] = '+';
            } else if (copy[i] == '_') {
                copy[i] = '/';
            }
        }
        return copy;
    }

    @Test
    void toStringShowsNoPatternBytes() {
        PatternSet set = set("topsecretvalue123");
        assertThat(set.toString()).doesNotContain("topsecret");
        assertThat(new Pattern(bytes("topsecretvalue123"), 0, Kind.VALUE).toString()).doesNotContain("topsecret");
    }
}
