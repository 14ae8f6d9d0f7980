package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestException;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The hash chain through the audit log, and its signed checkpoints (docs/REFERENCE.md, "Tamper evidence").
 *
 * <p>Every line ends in {@code ,"seq":N,"hash":"H"}: {@code seq} counts the chain's records from 0, and
 * {@code H} is the unpadded base64url SHA-256 of the previous line's hash (32 raw bytes; 32 zero bytes before the
 * first record) followed by this line's bytes up to, not including, {@code ,"hash":"}. Editing, removing or
 * reordering a line breaks the chain at that line; rewriting the chain from there on is what the checkpoints catch:
 * a {@code checkpoint} record signs, with the proxy's Ed25519 {@link AuditKey}, the hash of the line before it and
 * its own {@code seq} and {@code at} ({@code interval}: at most a second after records were written;
 * {@code rotate}: the last line of a file before rotation; {@code close}: when the log closed), so no line before a
 * checkpoint changes without its signature failing. A log appended to continues the chain of its last line, and the
 * file begun at rotation that of the one rotated, so restarts and rotated files form one chain.
 *
 * <p>The instance is the writer thread's state: the next {@code seq} and the hash of the last line.
 */
public final class AuditChain {

    /** What precedes the hash of each line; the hash covers the line up to it. */
    public static final String HASH_FIELD = ",\"hash\":\"";
    /** Characters of a line's hash: base64url without padding of 32 bytes. */
    public static final int HASH_CHARS = 43;
    public static final String CHECKPOINT = "checkpoint";

    private static final byte[] ZERO = new byte[32];
    private static final byte[] HASH_OPEN = HASH_FIELD.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ_OPEN = ",\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final Base64.Encoder HASH_TEXT = Base64.getUrlEncoder().withoutPadding();
    private static final byte[] CLOSE = {'"', '}', '\n'};
    private static final Pattern TAIL = Pattern.compile(",\"seq\":(\\d{1,18})" + Pattern.quote(HASH_FIELD)
            + "([A-Za-z0-9_-]{" + HASH_CHARS + "})\"}$");
    /** How much of an existing file's end is read to find its last line (a record is far shorter). */
    private static final int TAIL_BYTES = 256 * 1024;

    private final MessageDigest sha;
    private final byte[] head;
    private final byte[] hashText = new byte[HASH_CHARS];
    private long seq;
    private long unsigned;

    private AuditChain(byte[] head, long seq) {
        this.head = head;
        this.seq = seq;
        try {
            this.sha = MessageDigest.getInstance("SHA-256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: a standard JDK)", e);
        }
    }

    /** A chain's first record: seq 0 after 32 zero bytes. */
    static AuditChain fresh() {
        return new AuditChain(ZERO.clone(), 0);
    }

    /**
     * The chain that continues the last line of file, or a fresh one when the file is empty, or its last line is
     * not a chained record (cut short, or written before the chain existed): {@code audit verify} reports those.
     */
    static AuditChain continuing(Path file) throws IOException {
        if (!Files.exists(file)) {
            return fresh();
        }
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = in.size();
            int n = (int) Math.min(size, TAIL_BYTES);
            ByteBuffer tail = ByteBuffer.allocate(n);
            while (tail.hasRemaining() && in.read(tail, size - n + tail.position()) >= 0) {
                // read all n
            }
            String text = new String(tail.array(), 0, tail.position(), StandardCharsets.ISO_8859_1);
            if (!text.endsWith("\n")) {
                return fresh();
            }
            int start = text.lastIndexOf('\n', text.length() - 2) + 1;
            Matcher m = TAIL.matcher(text.substring(start, text.length() - 1));
            if (!m.find()) {
                return fresh();
            }
            return new AuditChain(Base64.getUrlDecoder().decode(m.group(2)), Long.parseLong(m.group(1)) + 1);
        }
    }

    /** Records linked since the last checkpoint. */
    long unsigned() {
        return unsigned;
    }

    /** Ends the record's line, written into batch from {@link JsonLine#start}, with its seq, hash and line feed. */
    void link(JsonLine line, Batch batch) {
        end(line, batch);
        batch.counted();
        unsigned++;
    }

    private void end(JsonLine line, Batch batch) {
        batch.put(SEQ_OPEN);
        batch.putDecimal(seq);
        sha.update(head);
        batch.digest(sha, line.start());
        try {
            sha.digest(head, 0, head.length);
        } catch (DigestException e) {
            throw new IllegalStateException("SHA-256 digest: " + e.getMessage(), e);
        }
        batch.put(HASH_OPEN);
        batch.put(hashText, 0, HASH_TEXT.encode(head, hashText));
        batch.put(CLOSE);
        seq++;
    }

    /** Appends a checkpoint signed with key; at is {@code interval} or {@code close}. */
    void checkpoint(Instant ts, String at, AuditKey key, Batch batch) {
        byte[] signature = key.sign(signedBytes(head, seq, at));
        JsonLine line = new JsonLine(batch)
                .field("ts", AuditRecords.timestamp(ts))
                .field("event", CHECKPOINT)
                .field("at", at)
                .field("records", unsigned)
                .field("key", Base64.getEncoder().encodeToString(key.publicKey().getEncoded()))
                .field("sig", Base64.getEncoder().encodeToString(signature));
        end(line, batch);
        unsigned = 0;
    }

    /** The hash of a line given the previous line's hash and the line's bytes before {@link #HASH_FIELD}. */
    public static byte[] hash(byte[] previous, byte[] lineBeforeHash) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(previous);
            return d.digest(lineBeforeHash);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: a standard JDK)", e);
        }
    }

    /** The hash before a chain's first record. */
    public static byte[] start() {
        return ZERO.clone();
    }

    /** What a checkpoint's signature covers: the previous line's hash, the checkpoint's seq and its at. */
    public static byte[] signedBytes(byte[] previous, long seq, String at) {
        return ("sallyport-audit-checkpoint-v1\n" + Base64.getUrlEncoder().withoutPadding().encodeToString(previous)
                + "\n" + seq + "\n" + at).getBytes(StandardCharsets.US_ASCII);
    }
}
