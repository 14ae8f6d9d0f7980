package dev.sallyport.sandbox.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The last sandbox trust store ({@link TrustFiles#P12}) kept in the runner's start-up cache folder: building one reads
 * and parses the JDK's roots (about 85 ms of a run's start). The file holds a key ({@link #key}: a new CA, a changed
 * {@code cacerts} or another JDK miss), a check of the store and the store; it is written to a temporary file and
 * moved into place, and used only when the key and the check match. A missing, stale or damaged file only costs the
 * time of building the store again.
 */
final class StoreCache {
    static final String FILE = "truststore.p12.cache";
    private static final byte[] MAGIC = "SPTRUST1".getBytes(StandardCharsets.US_ASCII);
    private static final int DIGEST = 32;
    private static final int CHECK = Long.BYTES;
    private static final int HEAD = MAGIC.length + DIGEST + CHECK;
    /** Far more than a store of a few hundred roots: a bigger file is not ours. */
    private static final int MAX_SIZE = 8 << 20;

    private StoreCache() {
    }

    /**
     * The key of the store for {@code caPem} and the JDK roots in {@code cacerts}: a digest of the CA, this JDK's
     * version and home, and the file's device, inode, size, modification and change times (a changed or replaced
     * {@code cacerts} has another change time or inode; hashing its 160 KB took longer than the rest of the key here).
     */
    static byte[] key(byte[] caPem, Path cacerts) {
        String roots = StartupFiles.identity(cacerts);
        byte[] about = ("sallyport trust store 1\0" + Runtime.version() + "\0" + System.getProperty("java.home")
                + "\0" + roots + "\0").getBytes(StandardCharsets.UTF_8);
        return TrustFiles.sha256(ByteBuffer.allocate(about.length + caPem.length).put(about).put(caPem).array());
    }

    /** The cached store with this key, if {@code folder} holds an intact one. */
    static Optional<byte[]> read(Path folder, byte[] key) {
        byte[] all = StartupFiles.read(folder, FILE, MAX_SIZE).orElse(new byte[0]);
        if (all.length <= HEAD || !Arrays.equals(all, 0, MAGIC.length, MAGIC, 0, MAGIC.length)
                || !Arrays.equals(all, MAGIC.length, MAGIC.length + DIGEST, key, 0, DIGEST)) {
            return Optional.empty();
        }
        byte[] store = Arrays.copyOfRange(all, HEAD, all.length);
        if (ByteBuffer.wrap(all, MAGIC.length + DIGEST, CHECK).getLong() != check(store)) {
            return Optional.empty();
        }
        return Optional.of(store);
    }

    /** A check of the store's bytes against a damaged file (CRC32C: the file is the runner's own, in its folder). */
    private static long check(byte[] store) {
        CRC32C crc = new CRC32C();
        crc.update(store);
        return crc.getValue();
    }

    /** Keeps {@code store} under {@code key} in {@code folder}; a failure only costs time. */
    static void write(Path folder, byte[] key, byte[] store) {
        ByteBuffer out = ByteBuffer.allocate(HEAD + store.length);
        out.put(MAGIC).put(key).putLong(check(store)).put(store);
        StartupFiles.replace(folder, FILE, out.array());
    }
}
