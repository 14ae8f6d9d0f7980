package dev.sallyport.proxy.inject;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.policy.StateDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Derives the placeholder a sandbox holds instead of each secret.
 *
 * <p>A derived placeholder is {@value #PREFIX} followed by 26 lowercase base32 characters (130 bits) of
 * HMAC-SHA256(key, "sallyport-placeholder-v1:" + name): unguessable without the key, recognizable by its
 * prefix, made only of {@code [a-z2-7-]} so it survives headers, URLs, environment variables and Basic
 * {@code user:password} untouched. The key is 32 random bytes in {@code <state dir>/placeholder.key}
 * (mode 0600, created once, never overwritten), so every process reading the same configuration and
 * state directory (the proxy, {@code sallyport secrets env}, the runner) agrees on the placeholders.
 * A secret's {@code placeholder:} in the policy overrides the derivation.
 *
 * <p>Anyone who can reach the proxy and knows a placeholder can have the secret injected on its hosts:
 * that is why placeholders are unguessable and why the key must not be readable from the sandbox.
 */
public final class Placeholders {

    public static final String PREFIX = "sallyport-ph-";
    public static final String KEY_FILE = "placeholder.key";
    static final int KEY_BYTES = 32;
    private static final int BODY_CHARS = 26;
    private static final char[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();

    private volatile byte[] key;
    private final Path deferredDir;

    private Placeholders(byte[] key) {
        if (key.length != KEY_BYTES) {
            throw new IllegalArgumentException("placeholder key: " + key.length + " bytes (expected: " + KEY_BYTES + ")");
        }
        this.key = key.clone();
        this.deferredDir = null;
    }

    private Placeholders(Path deferredDir) {
        this.deferredDir = deferredDir;
    }

    /**
     * Like {@link #fromStateDirectory} but reads (or creates) the key only when a placeholder is first
     * needed, so a proxy without secrets leaves the state directory alone. A key that cannot be read then
     * surfaces as an {@link UncheckedIOException}, which {@link SecretStore#load} reports as a load problem.
     */
    public static Placeholders deferred(Path stateDir) {
        return new Placeholders(stateDir);
    }

    private byte[] key() {
        byte[] k = key;
        if (k == null) {
            synchronized (this) {
                if (key == null) {
                    try {
                        key = loadOrCreateKey(deferredDir.resolve(KEY_FILE));
                    } catch (IOException e) {
                        throw new UncheckedIOException(e.getMessage(), e);     // one line already: see loadOrCreateKey
                    }
                }
                k = key;
            }
        }
        return k;
    }

    /** Reads {@code stateDir/placeholder.key}, creating it (0600) if it does not exist yet. */
    public static Placeholders fromStateDirectory(Path stateDir) throws IOException {
        return new Placeholders(loadOrCreateKey(stateDir.resolve(KEY_FILE)));
    }

    /** A random key held only in memory: for {@code sallyport run} with an ephemeral CA. */
    public static Placeholders ephemeral() {
        byte[] k = new byte[KEY_BYTES];
        new SecureRandom().nextBytes(k);
        return new Placeholders(k);
    }

    /** A given key (tests, or a runner passing its key on). */
    public static Placeholders withKey(byte[] key) {
        return new Placeholders(key);
    }

    /** Name to placeholder for every secret of {@code policy}, in policy order, using the state directory key. */
    public static Map<String, String> forPolicy(Policy policy, Path stateDir) throws IOException {
        if (policy.secrets().isEmpty()) {
            return Map.of();
        }
        return fromStateDirectory(stateDir).all(policy);
    }

    /** Name to placeholder for every secret of {@code policy}, in policy order. */
    public Map<String, String> all(Policy policy) {
        Map<String, String> out = new LinkedHashMap<>();
        for (SecretSpec s : policy.secrets()) {
            out.put(s.name(), placeholderFor(s));
        }
        return out;
    }

    /** The fixed placeholder of {@code spec} if it has one, else the derived one. */
    public String placeholderFor(SecretSpec spec) {
        return spec.placeholder() != null ? spec.placeholder() : derive(spec.name());
    }

    /** The derived placeholder for a secret name. */
    public String derive(String name) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key(), "HmacSHA256"));
            byte[] h = mac.doFinal(("sallyport-placeholder-v1:" + name).getBytes(StandardCharsets.UTF_8));
            StringBuilder sb = new StringBuilder(PREFIX.length() + BODY_CHARS).append(PREFIX);
            long bits = 0;
            int have = 0;
            int i = 0;
            while (sb.length() < PREFIX.length() + BODY_CHARS) {
                if (have < 5) {
                    bits = bits << 8 | (h[i++] & 0xFF);
                    have += 8;
                }
                sb.append(BASE32[(int) (bits >>> (have - 5)) & 31]);
                have -= 5;
            }
            return sb.toString();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable (expected: a standard JDK)", e);
        }
    }

    /**
     * The index of the first token at or after {@code from} in {@code bytes} shaped like a derived placeholder
     * ({@value #PREFIX} and 26 base32 characters, not followed by another), or -1.
     */
    static int nextDerivedShape(byte[] bytes, int from) {
        byte[] prefix = PREFIX.getBytes(StandardCharsets.ISO_8859_1);
        int last = bytes.length - prefix.length - BODY_CHARS;
        for (int at = Math.max(0, from); at <= last; at++) {
            if (bytes[at] == prefix[0] && Arrays.equals(bytes, at, at + prefix.length, prefix, 0, prefix.length)
                    && base32Run(bytes, at + prefix.length) == BODY_CHARS) {
                return at;
            }
        }
        return -1;
    }

    /** How many base32 characters start at {@code at}. */
    private static int base32Run(byte[] bytes, int at) {
        int i = at;
        while (i < bytes.length && ((bytes[i] >= 'a' && bytes[i] <= 'z') || (bytes[i] >= '2' && bytes[i] <= '7'))) {
            i++;
        }
        return i - at;
    }

    /** The key in {@code file}, created first if missing; an IOException's message is one line naming the file. */
    private static byte[] loadOrCreateKey(Path file) throws IOException {
        try {
            return readOrCreateKey(file);
        } catch (FileSystemException e) {
            String why = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName().replace("Exception", "");
            throw new IOException(file + ": cannot create or read the placeholder key: " + why
                    + " (expected: a state folder this user can write: $SALLYPORT_HOME, else ~/.local/share/sallyport)",
                    e);
        }
    }

    private static byte[] readOrCreateKey(Path file) throws IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isDirectory(file.getParent())) {
                Files.createDirectories(file.getParent(),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            byte[] fresh = new byte[KEY_BYTES];
            new SecureRandom().nextBytes(fresh);
            Path tmp = Files.createTempFile(file.getParent(), ".placeholder-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.write(tmp, fresh);
                StateDirectory.publishOnce(tmp, file);
            } finally {
                Arrays.fill(fresh, (byte) 0);
                Files.deleteIfExists(tmp);
            }
        }
        if (Files.isSymbolicLink(file) || !Files.isRegularFile(file)) {
            throw new IOException(file + ": not a regular file (expected: the 32-byte placeholder key)");
        }
        byte[] k = Files.readAllBytes(file);
        if (k.length != KEY_BYTES) {
            int n = k.length;
            Arrays.fill(k, (byte) 0);
            throw new IOException(file + ": " + n + " bytes (expected: " + KEY_BYTES
                    + "; delete it to generate a new key, which changes every derived placeholder)");
        }
        return k;
    }

    @Override
    public String toString() {
        return "Placeholders[key=redacted]";
    }
}
