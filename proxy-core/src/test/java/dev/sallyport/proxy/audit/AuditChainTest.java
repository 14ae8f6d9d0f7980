package dev.sallyport.proxy.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Signature;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The chain as the writer leaves it in a real file; {@code audit verify}'s attacks are tested in the cli. */
class AuditChainTest {

    private static final InstantSource CLOCK = InstantSource.fixed(Instant.parse("2026-11-30T00:00:00Z"));
    private static final Pattern TAIL = Pattern.compile(",\"seq\":(\\d+),\"hash\":\"([A-Za-z0-9_-]{43})\"}$");

    @TempDir
    Path dir;

    @Test
    void everyLineLinksToTheOneBeforeAcrossARestartAndTheCloseCheckpointSignsTheChain() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        AuditKey key = AuditKey.generate();
        for (int run = 0; run < 2; run++) {
            try (AuditLog log = AuditLog.open(file.toString(), CLOCK, AuditFailureListener.NONE, 16, key)) {
                log.on(AuditEvents.denied("c" + run));
                log.on(AuditEvents.exchange("r" + run, "/x"));
            }
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        assertThat(lines).hasSize(6);   // two records and a close checkpoint per run
        byte[] previous = AuditChain.start();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = TAIL.matcher(line);
            assertThat(m.find()).as("line %d: %s", i + 1, line).isTrue();
            assertThat(Long.parseLong(m.group(1))).as("seq of line %d", i + 1).isEqualTo(i);
            byte[] before = line.substring(0, line.indexOf(AuditChain.HASH_FIELD)).getBytes(StandardCharsets.US_ASCII);
            byte[] hash = AuditChain.hash(previous, before);
            assertThat(Base64.getUrlEncoder().withoutPadding().encodeToString(hash)).isEqualTo(m.group(2));
            if (line.contains("\"event\":\"checkpoint\"")) {
                assertThat(line).contains("\"at\":\"close\"", "\"records\":2");
                Signature s = Signature.getInstance("Ed25519");
                s.initVerify(key.publicKey());
                s.update(AuditChain.signedBytes(previous, i, "close"));
                assertThat(s.verify(Base64.getDecoder().decode(field(line, "sig")))).as("line %d signed", i + 1).isTrue();
                assertThat(field(line, "key")).isEqualTo(Base64.getEncoder().encodeToString(key.publicKey().getEncoded()));
            }
            previous = hash;
        }
        assertThat(lines.get(2)).contains("\"event\":\"checkpoint\"");
        assertThat(lines.get(5)).contains("\"event\":\"checkpoint\"");
    }

    @Test
    void aKeyInTheStateFolderIsCreatedOwnerOnlyOnceAndReadBack() throws Exception {
        AuditKey first = AuditKey.inStateFolder(dir.resolve("state"));
        AuditKey again = AuditKey.inStateFolder(dir.resolve("state"));
        assertThat(again.fingerprint()).isEqualTo(first.fingerprint()).startsWith("SHA256:");
        assertThat(Files.getPosixFilePermissions(dir.resolve("state").resolve(AuditKey.FILE)))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path pub = Files.writeString(dir.resolve("audit.pub"), first.publicPem());
        assertThat(AuditKey.readPublic(pub)).isEqualTo(first.publicKey());
        assertThat(first.toString()).doesNotContain("PRIVATE").contains(first.fingerprint());
    }

    private static String field(String line, String name) {
        int at = line.indexOf("\"" + name + "\":\"") + name.length() + 4;
        return line.substring(at, line.indexOf('"', at));
    }
}
