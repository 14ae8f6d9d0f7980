package dev.sallyport.cli.audit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import dev.sallyport.proxy.audit.AuditChain;
import dev.sallyport.proxy.audit.AuditKey;

/**
 * Checks the hash chain and the signed checkpoints of audit files given in order (a rotated set oldest first, or
 * one file), as proxy-core's {@link AuditChain} defines them, and names the first line that breaks it: one cut short
 * (truncated), one whose hash does not match (edited), a gap in {@code seq} (removed), a {@code seq} going back
 * (reordered), a checkpoint whose signature fails (the chain before it rewritten, or the checkpoint forged), one
 * signed by a key other than the one trusted (re-signed), and lines after the last checkpoint (cut off after it,
 * or not yet signed).
 */
public final class AuditVerifier {

    /** What a verification found. */
    public sealed interface Outcome {
        /** The whole chain holds; lastAt is the last checkpoint's {@code at}, lastCheckpoint where it is. */
        record Intact(long records, long checkpoints, String fingerprint, String lastAt, String lastCheckpoint)
                implements Outcome {}

        /** The first line that breaks the chain ({@code file:line}) and what is wrong with it. */
        record Broken(String where, String what) implements Outcome {}
    }

    private final JsonFactory json = JsonFactory.builder().build();
    private final List<PublicKey> trusted;
    private final boolean partial;

    /**
     * @param trusted the keys a checkpoint may be signed with; empty: the key the first checkpoint names
     * @param partial whether the first file may begin after the chain's start (its earlier files are gone)
     */
    public AuditVerifier(List<PublicKey> trusted, boolean partial) {
        this.trusted = List.copyOf(trusted);
        this.partial = partial;
    }

    /** The state of the walk along the chain. */
    private static final class Walk {
        byte[] previous = AuditChain.start();
        long expected;
        boolean started;
        long records;
        long checkpoints;
        PublicKey key;
        String lastAt;
        String lastCheckpoint;
        String lastLine;
        boolean lastWasCheckpoint;
        /** The seq a gap left out, while the rest is searched for it; -1: none. */
        long missing = -1;
    }

    public Outcome verify(List<Path> files) throws IOException {
        Walk walk = new Walk();
        for (Path file : files) {
            try (InputStream in = Files.newInputStream(file)) {
                Lines lines = new Lines(in);
                byte[] line;
                int number = 0;
                while ((line = lines.next()) != null) {
                    number++;
                    String where = file + ":" + number;
                    if (!lines.terminated()) {
                        return new Outcome.Broken(where, "cut short: the file ends inside this line (truncated)");
                    }
                    Optional<String> wrong = check(walk, line);
                    if (wrong.isPresent()) {
                        return new Outcome.Broken(where, wrong.get()
                                + (walk.missing < 0 ? "" : gap(walk.missing, files, file, lines, number)));
                    }
                    if (walk.lastWasCheckpoint) {
                        walk.lastCheckpoint = where;
                    }
                    walk.lastLine = where;
                }
            }
        }
        if (!walk.started) {
            return new Outcome.Broken(files.getLast() + ":1", "no records: nothing to verify");
        }
        if (!walk.lastWasCheckpoint) {
            return new Outcome.Broken(walk.lastLine, "the log ends here without a signed checkpoint "
                    + (walk.lastCheckpoint == null ? "at all" : "since " + walk.lastCheckpoint)
                    + ": lines after this one were cut off, or the last ones are not signed yet (the proxy died, or"
                    + " is still writing: it signs within about two seconds)");
        }
        return new Outcome.Intact(walk.records, walk.checkpoints, AuditKey.fingerprint(walk.key), walk.lastAt,
                walk.lastCheckpoint);
    }

    /** Whether the record a gap left out comes later (reordered) or nowhere (removed). */
    private static String gap(long missing, List<Path> files, Path file, Lines rest, int number) throws IOException {
        int at = number;
        byte[] line;
        while ((line = rest.next()) != null) {
            at++;
            if (seqOf(line) == missing) {
                return "seq " + missing + " comes later, at " + file + ":" + at + ": lines reordered";
            }
        }
        for (Path later : files.subList(files.indexOf(file) + 1, files.size())) {
            try (InputStream in = Files.newInputStream(later)) {
                Lines more = new Lines(in);
                at = 0;
                while ((line = more.next()) != null) {
                    at++;
                    if (seqOf(line) == missing) {
                        return "seq " + missing + " comes later, at " + later + ":" + at + ": lines reordered";
                    }
                }
            }
        }
        return "the record(s) before this line, from seq " + missing + ", were removed";
    }

    private static final Pattern SEQ = Pattern.compile(",\"seq\":(\\d{1,18})" + Pattern.quote(AuditChain.HASH_FIELD));

    private static long seqOf(byte[] line) {
        Matcher m = SEQ.matcher(new String(line, StandardCharsets.ISO_8859_1));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private Optional<String> check(Walk walk, byte[] line) {
        String text = new String(line, StandardCharsets.ISO_8859_1);
        int hashAt = text.lastIndexOf(AuditChain.HASH_FIELD);
        int end = hashAt + AuditChain.HASH_FIELD.length() + AuditChain.HASH_CHARS;
        if (hashAt < 0 || text.length() != end + 2 || !text.endsWith("\"}")) {
            return Optional.of("no hash chain at the end of the line (edited, or written by a proxy without tamper"
                    + " evidence)");
        }
        byte[] stated;
        Fields f;
        try {
            stated = Base64.getUrlDecoder().decode(text.substring(end - AuditChain.HASH_CHARS, end));
            f = fields(text);
        } catch (IOException | IllegalArgumentException e) {
            return Optional.of("not an audit record (" + e.getMessage() + "): edited");
        }
        if (f.seq() == null) {
            return Optional.of("no seq field: edited");
        }
        long seq = f.seq();
        if (!walk.started) {
            walk.started = true;
            if (seq != 0 && !partial) {
                return Optional.of("the chain starts at seq " + seq + ", not 0: the records before it are missing"
                        + " (give the earlier files first, or --partial to check from here)");
            }
            walk.expected = seq;
            if (seq != 0) {   // partial: the line before is not here, so this line's link cannot be checked
                walk.previous = null;
            }
        }
        if (seq > walk.expected) {
            walk.missing = walk.expected;
            return Optional.of("seq " + seq + " follows seq " + (walk.expected - 1) + ": ");
        }
        if (seq < walk.expected) {
            return Optional.of(seq == 0 ? "a second chain starts here (seq 0 after seq " + (walk.expected - 1)
                    + "): the lines before it are not this chain's history (replaced, or the log was cut before the"
                    + " proxy appended again)"
                    : "seq " + seq + " after seq " + (walk.expected - 1) + ": lines reordered or repeated");
        }
        byte[] before = Arrays.copyOf(line, hashAt);
        if (walk.previous != null && !Arrays.equals(AuditChain.hash(walk.previous, before), stated)) {
            return Optional.of("edited: the line's hash does not match its content and the line before it");
        }
        if (AuditChain.CHECKPOINT.equals(f.event())) {
            Optional<String> wrong = checkpoint(walk, f, seq);
            if (wrong.isPresent()) {
                return wrong;
            }
            walk.checkpoints++;
            walk.lastAt = f.at();
            walk.lastWasCheckpoint = true;
        } else {
            walk.records++;
            walk.lastWasCheckpoint = false;
        }
        walk.previous = stated;
        walk.expected = seq + 1;
        return Optional.empty();
    }

    private Optional<String> checkpoint(Walk walk, Fields f, long seq) {
        if (!List.of("interval", "close", "rotate").contains(String.valueOf(f.at()))) {
            return Optional.of("a checkpoint with at '" + f.at() + "' (expected: interval, rotate or close): forged");
        }
        PublicKey key;
        byte[] sig;
        try {
            key = AuditKey.publicKey(Base64.getDecoder().decode(String.valueOf(f.key())));
            sig = Base64.getDecoder().decode(String.valueOf(f.sig()));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return Optional.of("a checkpoint without a readable key and signature: forged");
        }
        String since = walk.lastCheckpoint == null ? "the start" : walk.lastCheckpoint;
        if (!trusted.isEmpty() && !trusted.contains(key)) {
            return Optional.of("the checkpoint is signed by key " + AuditKey.fingerprint(key) + ", not by the key"
                    + " given (--key): the log was re-signed with another key");
        }
        if (trusted.isEmpty() && walk.key != null && !walk.key.equals(key)) {
            return Optional.of("the checkpoint is signed by key " + AuditKey.fingerprint(key) + ", the ones before"
                    + " by " + AuditKey.fingerprint(walk.key) + ": re-signed from here (pass --key with the key you"
                    + " trust to check against it)");
        }
        if (walk.previous == null) {
            walk.key = key;
            return Optional.empty();   // partial, first line: nothing before it to check the signature against
        }
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(AuditChain.signedBytes(walk.previous, seq, f.at()));
            if (!s.verify(sig)) {
                return Optional.of("the checkpoint's signature does not verify: the lines since " + since
                        + " were rewritten (hashes recomputed), or the checkpoint is forged");
            }
        } catch (GeneralSecurityException e) {
            return Optional.of("the checkpoint's signature cannot be checked (" + e.getMessage() + "): forged");
        }
        walk.key = key;
        return Optional.empty();
    }

    private record Fields(Long seq, String event, String at, String key, String sig) {}

    private Fields fields(String text) throws IOException {
        try (JsonParser p = json.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            Long seq = null;
            String event = null, at = null, key = null, sig = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "seq" -> seq = value == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : null;
                    case "event" -> event = p.getValueAsString();
                    case "at" -> at = p.getValueAsString();
                    case "key" -> key = p.getValueAsString();
                    case "sig" -> sig = p.getValueAsString();
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new IOException("trailing data after the JSON object");
            }
            return new Fields(seq, event, at, key, sig);
        } catch (JsonProcessingException e) {
            throw new IOException(e.getOriginalMessage(), e);
        }
    }

    /** Lines of a stream as bytes, without their line feed; whether the last one read ended in one. */
    private static final class Lines {
        private final InputStream in;
        private final byte[] buffer = new byte[64 * 1024];
        private int position;
        private int limit;
        private boolean terminated;

        Lines(InputStream in) {
            this.in = in;
        }

        byte[] next() throws IOException {
            java.io.ByteArrayOutputStream line = null;
            while (true) {
                if (position == limit) {
                    limit = in.read(buffer);
                    position = 0;
                    if (limit <= 0) {
                        limit = 0;
                        terminated = false;
                        return line == null ? null : line.toByteArray();
                    }
                }
                int start = position;
                while (position < limit && buffer[position] != '\n') {
                    position++;
                }
                if (position < limit) {
                    terminated = true;
                    position++;
                    if (line == null) {
                        return Arrays.copyOfRange(buffer, start, position - 1);
                    }
                    line.write(buffer, start, position - 1 - start);
                    return line.toByteArray();
                }
                if (line == null) {
                    line = new java.io.ByteArrayOutputStream(256);
                }
                line.write(buffer, start, position - start);
            }
        }

        boolean terminated() {
            return terminated;
        }
    }
}
