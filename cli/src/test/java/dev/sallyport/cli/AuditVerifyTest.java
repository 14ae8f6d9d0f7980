package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.audit.AuditChain;
import dev.sallyport.proxy.audit.AuditKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code audit verify} against the attacker who can write the log file but not read the proxy's key: each edit of a
 * real proxy's log (two starts appending to one file) is caught, with the line that breaks the chain.
 */
class AuditVerifyTest {

    private static final Pattern TAIL = Pattern.compile(",\"seq\":(\\d+),\"hash\":\"[A-Za-z0-9_-]{43}\"}$");
    private static final Pattern SIGNED = Pattern.compile("\"key\":\"[^\"]*\",\"sig\":\"[^\"]*\"");

    @TempDir
    static Path shared;

    @TempDir
    Path dir;

    private static AuditKey key;
    private static List<String> original;
    private static Path publicPem;

    @BeforeAll
    static void writeARealLog() throws Exception {
        key = AuditKey.generate();
        RealAuditLog.Written w = RealAuditLog.write(shared, key, RealAuditLog.OK_PATHS, List.of(List.of(List.of("/ok/1", "/ok/2"), List.of("/denied")), List.of(List.of("/ok/3"))));
        original = Files.readAllLines(w.log(), StandardCharsets.US_ASCII);
        publicPem = Files.writeString(shared.resolve("audit-key.pub.pem"), key.publicPem());
    }

    @Test
    void theUntouchedLogOfTwoStartsVerifiesAgainstTheProxysKey() throws Exception {
        Path log = write(original);
        assertThat(original.stream().filter(l -> l.contains("\"at\":\"close\""))).hasSize(2);
        CliRun run = CliRun.of("audit", "verify", "--key", publicPem.toString(), log.toString());
        assertThat(run.exit()).as(run.out() + run.err()).isZero();
        long checkpoints = original.stream().filter(l -> l.contains("\"event\":\"checkpoint\"")).count();
        assertThat(run.out()).startsWith("intact: " + (original.size() - checkpoints) + " records and " + checkpoints
                + " checkpoints in 1 file, signed by " + key.fingerprint() + " (a key given)");
    }

    @Test
    void anEditedLineIsNamed() throws Exception {
        int n = firstLine("\"path\":\"/ok/2\"");
        List<String> lines = new ArrayList<>(original);
        lines.set(n - 1, lines.get(n - 1).replace("/ok/2", "/ok/9"));
        assertBreaks(write(lines), n, "edited: the line's hash does not match");
    }

    @Test
    void aRemovedLineIsNamedByTheLineAfterTheGap() throws Exception {
        int n = firstLine("\"path\":\"/denied\"");
        List<String> lines = new ArrayList<>(original);
        lines.remove(n - 1);
        assertBreaks(write(lines), n, "seq " + n + " follows seq " + (n - 2) + ": the record(s) before this line,"
                + " from seq " + (n - 1) + ", were removed");
    }

    @Test
    void reorderedLinesAreNamed() throws Exception {
        int n = firstLine("\"path\":\"/ok/2\"");
        List<String> lines = new ArrayList<>(original);
        lines.set(n - 1, original.get(n));
        lines.set(n, original.get(n - 1));
        Path log = write(lines);
        assertBreaks(log, n, "seq " + n + " follows seq " + (n - 2) + ": seq " + (n - 1) + " comes later, at " + log
                + ":" + (n + 1) + ": lines reordered");
    }

    @Test
    void aFileCutInsideItsLastLineIsTruncated() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        String all = String.join("\n", original) + "\n";
        Files.writeString(log, all.substring(0, all.length() - 20), StandardCharsets.US_ASCII);
        assertBreaks(log, original.size(), "cut short: the file ends inside this line (truncated)");
    }

    @Test
    void aFileCutBeforeItsCloseCheckpointIsTruncated() throws Exception {
        List<String> lines = new ArrayList<>(original.subList(0, original.size() - 2));
        int lastCheckpoint = lastLine(lines, "\"event\":\"checkpoint\"");
        assertBreaks(write(lines), lines.size(), "the log ends here without a signed checkpoint since " + dir
                .resolve("audit.jsonl") + ":" + lastCheckpoint + ": lines after this one were cut off");
    }

    @Test
    void anEditWithTheChainRecomputedIsCaughtByTheNextCheckpointsSignature() throws Exception {
        int n = firstLine("\"path\":\"/denied\"");
        List<String> lines = new ArrayList<>(original);
        lines.set(n - 1, lines.get(n - 1).replace("\"decision\":\"deny\"", "\"decision\":\"allow\""));
        rechain(lines, null);
        int checkpoint = n + firstLine(lines.subList(n, lines.size()), "\"event\":\"checkpoint\"");
        assertBreaks(write(lines), checkpoint, "the checkpoint's signature does not verify: the lines since ");
    }

    @Test
    void aForgedCheckpointAfterAddedLinesIsCaught() throws Exception {
        List<String> lines = new ArrayList<>(original);
        String lastRecord = lines.get(firstLine("\"path\":\"/ok/3\"") - 1);
        lines.add(lastRecord.replace("/ok/3", "/ok/innocent"));
        String close = lines.get(lines.size() - 2);
        lines.add(close.replaceFirst("\"sig\":\"[^\"]*\"", "\"sig\":\"" + Base64.getEncoder()
                .encodeToString(new byte[64]) + "\""));
        rechain(lines, null);
        assertBreaks(write(lines), lines.size(), "the checkpoint's signature does not verify");
    }

    @Test
    void aLogReSignedWithAnotherKeyPassesOnItsOwnButNotAgainstTheProxysKey() throws Exception {
        List<String> lines = new ArrayList<>(original);
        int n = firstLine("\"path\":\"/denied\"");
        lines.set(n - 1, lines.get(n - 1).replace("\"decision\":\"deny\"", "\"decision\":\"allow\""));
        rechain(lines, KeyPairGenerator.getInstance("Ed25519").generateKeyPair());
        Path log = write(lines);

        CliRun alone = CliRun.of("audit", "verify", log.toString());
        assertThat(alone.exit()).as(alone.out()).isZero();
        assertThat(alone.out()).contains("pass --key with the proxy's exported key").doesNotContain(key.fingerprint());

        assertBreaks(log, firstLine(lines, "\"event\":\"checkpoint\""),
                "the checkpoint is signed by key SHA256:");
    }

    @Test
    void aLineThatIsNotChainedAndAChainThatDoesNotStartAtZeroAreNamed() throws Exception {
        List<String> lines = new ArrayList<>(original);
        lines.add(1, "{\"ts\":\"2026-11-30T00:00:00.000Z\",\"event\":\"request\"}");
        assertBreaks(write(lines), 2, "no hash chain at the end of the line");
        assertBreaks(write(original.subList(3, original.size())), 1, "the chain starts at seq 3, not 0");
        CliRun partial = CliRun.of("audit", "verify", "--partial", write(original.subList(3, original.size())).toString());
        assertThat(partial.exit()).as(partial.out()).isZero();
    }

    @Test
    void aRotatedSetVerifiesAsOneChainAndAMissingFileIsNamed() throws Exception {
        RealAuditLog.Written w = RealAuditLog.write(dir, key, ", rotate_bytes: 4096", """
                rules:
                  - name: local-api
                    cidrs: [127.0.0.1/32]
                    ports: [%d]
                """, List.of(List.of(List.of("/a/1", "/a/2"), List.of("/b/1", "/b/2"), List.of("/c/1", "/c/2"),
                List.of("/d/1", "/d/2"), List.of("/e/1", "/e/2"), List.of("/f/1", "/f/2"))));
        List<String> files = new ArrayList<>();
        try (var rotated = Files.newDirectoryStream(dir, "audit.jsonl.*")) {
            rotated.forEach(f -> files.add(f.toString()));
        }
        files.sort(null);
        assertThat(files).as("rotated files").hasSizeGreaterThan(1);
        for (String f : files) {
            List<String> lines = Files.readAllLines(Path.of(f));
            assertThat(lines.getLast()).as("the end of %s", f).contains("\"event\":\"checkpoint\"", "\"at\":\"rotate\"");
        }
        files.add(w.log().toString());
        List<String> args = new ArrayList<>(List.of("audit", "verify", "--key", publicPem.toString()));
        args.addAll(files);
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertThat(run.exit()).as(run.out()).isZero();
        assertThat(run.out()).contains("checkpoints in " + files.size() + " files");

        String second = files.remove(1);
        long firstSeqOfThird = seq(Files.readAllLines(Path.of(files.get(1))).getFirst());
        args.remove(second);
        CliRun gap = CliRun.of(args.toArray(String[]::new));
        assertThat(gap.exit()).isEqualTo(1);
        assertThat(gap.out()).startsWith(files.get(1) + ":1: seq " + firstSeqOfThird + " follows seq ")
                .contains("were removed");
    }

    private static long seq(String line) {
        Matcher m = TAIL.matcher(line);
        assertThat(m.find()).isTrue();
        return Long.parseLong(m.group(1));
    }

    private void assertBreaks(Path log, int line, String what) {
        CliRun run = CliRun.of("audit", "verify", "--key", publicPem.toString(), log.toString());
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
        assertThat(run.out()).startsWith(log + ":" + line + ": ").contains(what).hasLineCount(1);
    }

    private Path write(List<String> lines) throws Exception {
        return Files.writeString(dir.resolve("audit.jsonl"), String.join("\n", lines) + "\n", StandardCharsets.US_ASCII);
    }

    private static int firstLine(String contains) {
        return firstLine(original, contains);
    }

    private static int firstLine(List<String> lines, String contains) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(contains)) {
                return i + 1;
            }
        }
        throw new AssertionError("no line contains " + contains + " in:\n" + String.join("\n", lines));
    }

    private static int lastLine(List<String> lines, String contains) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).contains(contains)) {
                return i + 1;
            }
        }
        return 0;
    }

    /**
     * What an attacker can do without the proxy's key: renumber and rehash every line (and, given a key pair of
     * their own, sign every checkpoint with it).
     */
    private static void rechain(List<String> lines, KeyPair attacker) throws Exception {
        byte[] previous = AuditChain.start();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = TAIL.matcher(line);
            assertThat(m.find()).isTrue();
            String body = line.substring(0, m.start());
            if (attacker != null && body.contains("\"event\":\"checkpoint\"")) {
                String at = body.contains("\"at\":\"close\"") ? "close" : "interval";
                Signature s = Signature.getInstance("Ed25519");
                s.initSign(attacker.getPrivate());
                s.update(AuditChain.signedBytes(previous, i, at));
                body = SIGNED.matcher(body).replaceFirst("\"key\":\"" + Base64.getEncoder().encodeToString(
                        attacker.getPublic().getEncoded()) + "\",\"sig\":\"" + Base64.getEncoder().encodeToString(
                        s.sign()) + "\"");
            }
            String before = body + ",\"seq\":" + i;
            previous = AuditChain.hash(previous, before.getBytes(StandardCharsets.US_ASCII));
            lines.set(i, before + AuditChain.HASH_FIELD + Base64.getUrlEncoder().withoutPadding().encodeToString(previous)
                    + "\"}");
        }
    }
}
