package dev.sallyport.proxy.git;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sallyport.policy.RefUpdate;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzz target: any bytes as the start of a {@code git-receive-pack} body. The reader never throws; its result does
 * not depend on how the bytes are split into parts (one part, or one byte at a time); and when it reads a command
 * list, that list holds every ref update a plain reading of the pkt-lines up to the first flush finds (each data
 * line outside a push certificate, one newline chomped, cut at NUL, neither {@code shallow} nor
 * {@code push-cert}), in order: no update reaches the server unseen. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/git/CommandReaderFuzzTestInputs/}.
 */
class CommandReaderFuzzTest {

    @FuzzTest
    void everyUpdateTheServerWouldReadIsSeen(byte[] body) {
        CommandReader.Result whole = finish(new CommandReader(), body, body.length);
        CommandReader.Result bytewise = finish(new CommandReader(), body, 1);
        assertThat(bytewise).as("the same result however the body is split").isEqualTo(whole);
        if (whole instanceof CommandReader.Commands c) {
            List<RefUpdate> plain = plainReading(body);
            if (!plain.isEmpty()) {
                assertThat(c.updates()).containsSubsequence(plain);
            }
            for (RefUpdate u : c.updates()) {
                assertThat(u.oldId()).hasSameSizeAs(u.newId()).matches("[0-9a-fA-F]{40}|[0-9a-fA-F]{64}");
            }
        }
    }

    private static CommandReader.Result finish(CommandReader reader, byte[] body, int step) {
        CommandReader.Result r = new CommandReader.NeedMore();
        for (int at = 0; at < body.length && r instanceof CommandReader.NeedMore; at += step) {
            r = reader.offer(body, at, Math.min(step, body.length - at));
        }
        return r instanceof CommandReader.NeedMore ? reader.end() : r;
    }

    /** The updates of the data lines before the first flush, outside push certificates, read without state. */
    private static List<RefUpdate> plainReading(byte[] body) {
        List<RefUpdate> out = new ArrayList<>();
        boolean cert = false;
        int at = 0;
        while (at + 4 <= body.length) {
            int length = Integer.parseInt(new String(body, at, 4, StandardCharsets.ISO_8859_1), 16);
            if (length == 0) {
                break;
            }
            String payload = new String(body, at + 4, length - 4, StandardCharsets.ISO_8859_1);
            at += length;
            if (cert) {
                cert = !payload.equals("push-cert-end\n");
                continue;
            }
            String line = payload.endsWith("\n") ? payload.substring(0, payload.length() - 1) : payload;
            int nul = line.indexOf('\0');
            line = nul < 0 ? line : line.substring(0, nul);
            if (line.equals("push-cert")) {
                cert = true;
            } else if (!line.startsWith("shallow ")) {
                String[] parts = line.split(" ", 3);
                out.add(new RefUpdate(parts[0], parts[1], parts[2]));
            }
        }
        return out;
    }
}
