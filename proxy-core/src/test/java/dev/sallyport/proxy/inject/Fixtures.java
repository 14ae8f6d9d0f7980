package dev.sallyport.proxy.inject;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/** Shared test material: random secret values per run, specs, a store, byte searching. */
final class Fixtures {

    static final SecureRandom RANDOM = new SecureRandom();
    static final byte[] KEY = new byte[32];

    static {
        RANDOM.nextBytes(KEY);
    }

    private Fixtures() {}

    /** A token like the ones real services issue, random per call. */
    static String token(String prefix) {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder sb = new StringBuilder(prefix);
        for (int i = 0; i < 36; i++) {
            sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    /** A token with characters that percent-encoding and JSON escaping change. */
    static String awkwardToken() {
        return token("aw/") + "+/=\"\\ ~x";
    }

    static SecretSpec env(String name, List<String> hosts, List<String> headers) {
        return spec(name, new SecretSource.Env(name), hosts, headers, null, false, false);
    }

    static SecretSpec spec(String name, SecretSource from, List<String> hosts, List<String> headers,
                           String placeholder, boolean require, boolean lazy) {
        return new SecretSpec(name, 1, from, hosts.stream().map(HostPattern::parse).toList(), headers,
                placeholder, require, lazy, false);
    }

    /** {@code spec} with {@code elsewhere_on_own_hosts: refuse}. */
    static SecretSpec refusingElsewhere(SecretSpec spec) {
        return new SecretSpec(spec.name(), spec.line(), spec.from(), spec.hosts(), spec.headers(), spec.placeholder(),
                spec.require(), spec.lazy(), spec.allowCleartext(), SecretSpec.Elsewhere.REFUSE);
    }

    static SecretStore store(Map<String, String> env, SecretSpec... specs) throws SecretLoadException {
        return SecretStore.load(List.of(specs), Placeholders.withKey(KEY), env::get, InstantSource.system());
    }

    /** A clock tests move by hand. */
    static final class Clock implements InstantSource {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-30T00:00:00Z"));

        @Override
        public Instant instant() {
            return now.get();
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    static ByteBuf buf(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    static boolean contains(byte[] hay, byte[] needle) {
        for (int i = 0; i + needle.length <= hay.length; i++) {
            if (Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
                return true;
            }
        }
        return false;
    }

    /** Every form of {@code value} that must never reach the client. */
    static List<byte[]> forbiddenForms(String value) {
        List<byte[]> out = new ArrayList<>(StorePatterns.valueForms(bytes(value)));
        return out;
    }

    /** Drains released-on-read buffers into one array and releases them. */
    static byte[] drain(List<ByteBuf> bufs) {
        int n = bufs.stream().mapToInt(ByteBuf::readableBytes).sum();
        byte[] out = new byte[n];
        int pos = 0;
        for (ByteBuf b : bufs) {
            int r = b.readableBytes();
            b.readBytes(out, pos, r);
            pos += r;
            b.release();
        }
        bufs.clear();
        return out;
    }
}
