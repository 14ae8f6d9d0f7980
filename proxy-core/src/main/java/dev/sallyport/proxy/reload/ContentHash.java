package dev.sallyport.proxy.reload;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 of a file's content, to act on a file change once per new content. */
final class ContentHash {

    private static final byte[] MISSING = new byte[0];

    private ContentHash() {}

    /** The digest, or an empty array when the file cannot be read (a missing file is a content too). */
    static byte[] of(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return md.digest();
        } catch (IOException e) {
            return MISSING;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: every JDK has it)", e);
        }
    }
}
