package dev.sallyport.proxy.git;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.RefUpdate;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The command list reader, byte-exact: what git sends is read, anything else is unreadable. */
class CommandReaderTest {

    private static final String ZERO = "0".repeat(40);
    private static final String A = "a".repeat(40);
    private static final String B = "b".repeat(40);

    private static byte[] pkt(String payload) {
        byte[] p = payload.getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[p.length + 4];
        System.arraycopy(String.format("%04x", p.length + 4).getBytes(StandardCharsets.US_ASCII), 0, out, 0, 4);
        System.arraycopy(p, 0, out, 4, p.length);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static CommandReader.Result read(byte[] body) {
        CommandReader r = new CommandReader();
        CommandReader.Result result = r.offer(body, 0, body.length);
        return result instanceof CommandReader.NeedMore ? r.end() : result;
    }

    @Test
    void readsTheCommandsAndCapabilitiesGitSendsAndStopsAtTheFlush() {
        byte[] body = concat(pkt(A + " " + B + " refs/heads/main\0 report-status side-band-64k agent=git/2"),
                pkt(ZERO + " " + B + " refs/heads/agent/x\n"), pkt(A + " " + ZERO + " refs/tags/v1"),
                "0000PACK-and-not-a-pkt-line".getBytes(StandardCharsets.ISO_8859_1));
        CommandReader.Commands c = (CommandReader.Commands) read(body);
        assertThat(c.updates()).containsExactly(new RefUpdate(A, B, "refs/heads/main"),
                new RefUpdate(ZERO, B, "refs/heads/agent/x"), new RefUpdate(A, ZERO, "refs/tags/v1"));
        assertThat(c.updates()).extracting(RefUpdate::change).containsExactly(RefUpdate.Change.UPDATE,
                RefUpdate.Change.CREATE, RefUpdate.Change.DELETE);
        assertThat(c.capabilities()).contains("report-status", "side-band-64k");
        assertThat(read("0000".getBytes(StandardCharsets.US_ASCII))).isEqualTo(new CommandReader.Commands(
                java.util.List.of(), java.util.Set.of()));
    }

    @Test
    void aPushCertificatesCommandsAreReadToo() {
        byte[] body = concat(pkt("push-cert\0 report-status"), pkt("certificate version 0.1\n"), pkt("pusher x\n"),
                pkt("\n"), pkt(A + " " + B + " refs/heads/main\n"), pkt("-----BEGIN PGP SIGNATURE-----\n"),
                pkt("push-cert-end\n"), "0000".getBytes(StandardCharsets.US_ASCII));
        assertThat(((CommandReader.Commands) read(body)).updates()).containsExactly(new RefUpdate(A, B,
                "refs/heads/main"));
    }

    @Test
    void anythingElseIsUnreadable() {
        for (byte[] body : new byte[][] {
                "0001".getBytes(StandardCharsets.US_ASCII),                           // a delim-pkt
                "00zz".getBytes(StandardCharsets.US_ASCII),                           // not hex
                "0003".getBytes(StandardCharsets.US_ASCII),                           // too short for a pkt-line
                pkt(A + " " + B + " refs/heads/main"),                                // ends before the flush
                new byte[0],                                                          // empty
                concat(pkt(A + " " + B.substring(1) + " refs/heads/main"), "0000".getBytes(StandardCharsets.US_ASCII)),
                concat(pkt(A + "  refs/heads/main"), "0000".getBytes(StandardCharsets.US_ASCII)),
                concat(pkt("hello"), "0000".getBytes(StandardCharsets.US_ASCII)),
                concat(pkt("push-cert"), "0000".getBytes(StandardCharsets.US_ASCII)), // a flush inside the cert
        }) {
            assertThat(read(body)).as(new String(body, StandardCharsets.ISO_8859_1))
                    .isInstanceOfSatisfying(CommandReader.Unreadable.class, u -> assertThat(u.tooLong()).isFalse());
        }
        byte[] line = pkt(A + " " + B + " refs/heads/" + "x".repeat(60_000));
        CommandReader r = new CommandReader();
        CommandReader.Result result = new CommandReader.NeedMore();
        for (int i = 0; i < 20 && result instanceof CommandReader.NeedMore; i++) {
            result = r.offer(line, 0, line.length);
        }
        assertThat(result).isInstanceOfSatisfying(CommandReader.Unreadable.class, u -> assertThat(u.tooLong()).isTrue());
    }
}
