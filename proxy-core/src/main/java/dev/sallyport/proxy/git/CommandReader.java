package dev.sallyport.proxy.git;

import dev.sallyport.policy.RefUpdate;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the command list that begins a {@code git-receive-pack} request body, as its bytes come: pkt-lines (four
 * hex digits of length, then the payload) up to the first flush-pkt ({@code 0000}), each a ref update
 * ({@code old-id SP new-id SP refname}, the first followed by NUL and the client's capabilities), a
 * {@code shallow} line, or a push certificate whose command lines are read too (every line of it that reads as a
 * command, more than the server reads from it). What follows the flush (push options, the pack) is not read. Anything
 * else, or a body that ends first, is {@link Unreadable}: the push is refused, never passed on unread. Reads at
 * most {@link #MAX_BYTES}.
 */
public final class CommandReader {

    /** The most of a body read before the command list must have ended. */
    public static final int MAX_BYTES = 1 << 20;
    private static final int MAX_PKT = 65520;
    private static final byte[] CERT_END = "push-cert-end\n".getBytes(StandardCharsets.US_ASCII);

    /** What has been read so far. */
    public sealed interface Result {}

    /** More bytes are needed. */
    public record NeedMore() implements Result {}

    /** The command list: its ref updates in order and the capabilities the client asked for. */
    public record Commands(List<RefUpdate> updates, Set<String> capabilities) implements Result {
        public Commands {
            updates = List.copyOf(updates);
            capabilities = Set.copyOf(capabilities);
        }
    }

    /** Not a command list as git sends one; {@code tooLong}: longer than {@link #MAX_BYTES}. */
    public record Unreadable(String why, boolean tooLong) implements Result {}

    private byte[] buf = new byte[4096];
    private int size;
    private int pos;
    private boolean inCert;
    private final StringBuilder cert = new StringBuilder();
    private final List<RefUpdate> updates = new ArrayList<>();
    private final Set<String> capabilities = new LinkedHashSet<>();
    private Result result = new NeedMore();

    /** Offers the next {@code length} bytes of the body; returns the result so far (final once not NeedMore). */
    public Result offer(byte[] bytes, int offset, int length) {
        if (!(result instanceof NeedMore)) {
            return result;
        }
        int take = Math.min(length, MAX_BYTES - size);
        if (size + take > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(size + take, Math.min(buf.length * 2, MAX_BYTES)));
        }
        System.arraycopy(bytes, offset, buf, size, take);
        size += take;
        result = read();
        if (result instanceof NeedMore && size == MAX_BYTES) {
            result = new Unreadable("the command list goes on past " + MAX_BYTES + " bytes", true);
        }
        return result;
    }

    /** The body ended: the result, Unreadable if the command list had not ended. */
    public Result end() {
        if (result instanceof NeedMore) {
            result = new Unreadable("the body ended " + (size == 0 ? "empty" : "before the command list's flush-pkt")
                    , false);
        }
        return result;
    }

    private Result read() {
        while (true) {
            if (size - pos < 4) {
                return new NeedMore();
            }
            int length = hexLength(pos);
            if (length < 0) {
                return unreadable("a pkt-line length that is not four hex digits at byte " + pos);
            }
            if (length == 0) {
                if (inCert) {
                    return unreadable("a flush-pkt inside the push certificate");
                }
                return new Commands(updates, capabilities);
            }
            if (length < 4 || length > MAX_PKT) {
                return unreadable("a pkt-line of length " + length + " at byte " + pos + " (expected: 4.." + MAX_PKT
                        + " or a flush-pkt)");
            }
            if (size - pos < length) {
                return new NeedMore();
            }
            String problem = line(pos + 4, length - 4);
            if (problem != null) {
                return unreadable(problem);
            }
            pos += length;
        }
    }

    /** One pkt-line's payload; a problem, or null. */
    private String line(int start, int length) {
        if (inCert) {
            if (length == CERT_END.length && Arrays.equals(buf, start, start + length, CERT_END, 0, length)) {
                inCert = false;
                return certCommands();
            }
            cert.append(new String(buf, start, upTo(start, length, (byte) 0) - start, StandardCharsets.ISO_8859_1));
            return null;
        }
        int end = start + length;
        if (end > start && buf[end - 1] == '\n') {
            end--;
        }
        int nul = upTo(start, end - start, (byte) 0);
        String text = new String(buf, start, nul - start, StandardCharsets.ISO_8859_1);
        if (nul < end) {
            for (String cap : new String(buf, nul + 1, end - nul - 1, StandardCharsets.ISO_8859_1).split(" ")) {
                if (!cap.isEmpty()) {
                    capabilities.add(cap);
                }
            }
        }
        if (text.startsWith("shallow ")) {
            return objectId(text, 8) == text.length() ? null : "a shallow line without one object id";
        }
        if (text.equals("push-cert")) {
            inCert = true;
            return null;
        }
        RefUpdate u = command(text);
        if (u == null) {
            return "a line that is not 'old-id new-id refname': '" + printable(text) + "'";
        }
        updates.add(u);
        return null;
    }

    /** Every line of the certificate that reads as a command (the server reads those after its header). */
    private String certCommands() {
        for (String certLine : cert.toString().split("\n")) {
            RefUpdate u = command(certLine);
            if (u != null) {
                updates.add(u);
            }
        }
        cert.setLength(0);
        return null;
    }

    /** {@code old SP new SP refname} with both ids of one length (SHA-1 or SHA-256), or null. */
    static RefUpdate command(String text) {
        int oldEnd = objectId(text, 0);
        if (oldEnd < 0 || oldEnd >= text.length() || text.charAt(oldEnd) != ' ') {
            return null;
        }
        int newEnd = objectId(text, oldEnd + 1);
        if (newEnd < 0 || newEnd - oldEnd - 1 != oldEnd || newEnd >= text.length() || text.charAt(newEnd) != ' '
                || newEnd + 1 == text.length()) {
            return null;
        }
        return new RefUpdate(text.substring(0, oldEnd), text.substring(oldEnd + 1, newEnd),
                text.substring(newEnd + 1));
    }

    /** Where an object id (40 or 64 hex digits) starting at {@code from} ends, or -1. */
    private static int objectId(String text, int from) {
        int i = from;
        while (i < text.length() && hex(text.charAt(i)) >= 0 && i - from < 64) {
            i++;
        }
        int n = i - from;
        if (n == 40 || n == 64) {
            return i;
        }
        return -1;
    }

    private int hexLength(int at) {
        int v = 0;
        for (int i = at; i < at + 4; i++) {
            int d = hex((char) (buf[i] & 0xff));
            if (d < 0) {
                return -1;
            }
            v = v * 16 + d;
        }
        return v;
    }

    /** The value of an ASCII hex digit (either case, as git reads them), or -1. */
    private static int hex(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                : -1;
    }

    private int upTo(int start, int length, byte b) {
        for (int i = start; i < start + length; i++) {
            if (buf[i] == b) {
                return i;
            }
        }
        return start + length;
    }

    private static Unreadable unreadable(String why) {
        return new Unreadable(why, false);
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && b.length() < 80; i++) {
            char c = s.charAt(i);
            b.append(c >= ' ' && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c));
        }
        return s.length() > 80 ? b + "..." : b.toString();
    }
}
