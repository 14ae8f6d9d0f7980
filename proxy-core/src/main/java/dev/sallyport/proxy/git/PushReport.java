package dev.sallyport.proxy.git;

import dev.sallyport.policy.RefUpdate;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The answer to a refused push, in the form {@code git push} shows: a {@code git-receive-pack} result whose
 * report-status says {@code ng <ref> <reason>} for every ref ({@code ! [remote rejected] ... (reason)}), and, when
 * the client asked for a side band, the message lines on band 2 first ({@code remote: sallyport: ...}). Without
 * report-status (git always asks for it) only the message is sent.
 */
public final class PushReport {

    /** The content type of a receive-pack result. */
    public static final String CONTENT_TYPE = "application/x-git-receive-pack-result";

    private PushReport() {}

    /**
     * The body: {@code message} (lines) and, per update, the reason it failed ({@code reasons}: ref to reason; a ref
     * without one is refused because others were: {@code incomplete}).
     */
    public static byte[] body(Set<String> capabilities, List<String> message, List<RefUpdate> updates,
                              Map<String, String> reasons, String incomplete) {
        ByteArrayOutputStream report = new ByteArrayOutputStream();
        if (capabilities.contains("report-status") || capabilities.contains("report-status-v2")) {
            pkt(report, "unpack ok\n");
            for (RefUpdate u : updates) {
                pkt(report, "ng " + u.ref() + " sallyport " + reasons.getOrDefault(u.ref(), incomplete) + "\n");
            }
            report.writeBytes(flush());
        }
        int band = capabilities.contains("side-band-64k") ? 65515 : capabilities.contains("side-band") ? 995 : 0;
        if (band == 0) {
            return report.toByteArray();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String line : message) {
            sideband(out, 2, (line + "\n").getBytes(StandardCharsets.UTF_8), band);
        }
        sideband(out, 1, report.toByteArray(), band);
        out.writeBytes(flush());
        return out.toByteArray();
    }

    private static void sideband(ByteArrayOutputStream out, int channel, byte[] data, int max) {
        for (int at = 0; at < data.length; at += max) {
            int n = Math.min(max, data.length - at);
            out.writeBytes(String.format("%04x", n + 5).getBytes(StandardCharsets.US_ASCII));
            out.write(channel);
            out.write(data, at, n);
        }
    }

    private static void pkt(ByteArrayOutputStream out, String payload) {
        byte[] p = payload.getBytes(StandardCharsets.ISO_8859_1);
        out.writeBytes(String.format("%04x", p.length + 4).getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(p);
    }

    private static byte[] flush() {
        return "0000".getBytes(StandardCharsets.US_ASCII);
    }
}
