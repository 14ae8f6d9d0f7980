package dev.sallyport.proxy.inject;

import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import io.netty.buffer.ByteBuf;
import java.util.Collections;
import java.util.Set;

/**
 * Streams a request body looking for placeholders (raw, or base64 at any alignment) and for real values
 * (all their forms) going to a host the secret is not bound to. A body is never a place where a
 * placeholder is swapped: toward a host its secret is not bound to it is refused ({@code secret_wrong_host});
 * on its own hosts it goes on unchanged, named in {@link #forwarded()}, unless the secret says
 * {@code elsewhere_on_own_hosts: refuse} ({@code secret_wrong_place}).
 *
 * <p>Call {@link #check(ByteBuf)} on every chunk <em>before</em> forwarding it, and {@link #finish()} at
 * the end. Keeps only {@code maxLength - 1} bytes between chunks, so a placeholder split across chunks is found
 * once enough bytes after its start have arrived (or at the end): the last {@link #unjudged()} bytes seen must
 * wait until then, never be forwarded before. Once refused it stays refused. Not thread-safe.
 */
public final class RequestBodyGuard {

    private static final int SLICE = 16 * 1024;

    private final SecretStore store;
    private final String host;
    private final String client;
    private final String place;
    private final PatternSet patterns;
    private final byte[] window;
    private final int keep;
    private final Set<String> forwarded;
    private int carried;
    private Refused refusal;

    /**
     * {@code place} names what is checked in a refusal's {@code where}: {@code body}, {@code websocket message};
     * {@code forwarded} collects the names of secrets whose placeholder goes on unchanged.
     */
    RequestBodyGuard(SecretStore store, String host, String client, String place, Set<String> forwarded) {
        this.store = store;
        this.host = host;
        this.client = client;
        this.place = place;
        this.forwarded = forwarded;
        this.patterns = store.patterns().request();
        this.keep = Math.max(1, patterns.maxLength() - 1);
        this.window = new byte[keep + SLICE];
    }

    /** Names of the secrets whose placeholder this guard (and the others of its exchange) let go on unchanged. */
    public Set<String> forwarded() {
        return Collections.unmodifiableSet(forwarded);
    }

    /** True when there is nothing to look for (no secrets): the handler may skip the calls. */
    public boolean idle() {
        return patterns.isEmpty();
    }

    /** Scans the readable bytes of {@code chunk} (not consumed, not released); the refusal, or null. */
    public Refused check(ByteBuf chunk) {
        if (refusal != null || patterns.isEmpty()) {
            return refusal;
        }
        int pos = chunk.readerIndex();
        int end = chunk.writerIndex();
        while (pos < end && refusal == null) {
            int n = Math.min(SLICE, end - pos);
            chunk.getBytes(pos, window, carried, n);
            scan(carried + n, false);
            pos += n;
        }
        return refusal;
    }

    /**
     * How many bytes at the end of what {@link #check} saw are not judged yet (they may start a placeholder that
     * the next chunk completes; only bytes that could begin one): a caller must not forward them before the next
     * check or {@link #finish}.
     */
    public int unjudged() {
        return refusal != null || patterns.isEmpty() ? 0 : carried;
    }

    /** Scans what was held back at the end of the body; the refusal, or null. */
    public Refused finish() {
        if (refusal == null && !patterns.isEmpty()) {
            scan(carried, true);
        }
        return refusal;
    }

    /**
     * Judges every match that starts before the last {@code keep} bytes; of those last bytes, only the ones from the
     * first position where a placeholder could still begin (they are a proper prefix of one) wait for the next
     * chunk, so a streamed body (a gRPC call, a chat upload) is never held back for bytes that cannot be one.
     */
    private void scan(int len, boolean last) {
        int limit = last ? len : Math.max(0, len - keep);
        for (int p = patterns.nextCandidate(window, 0, limit, len); p < limit;
                p = patterns.nextCandidate(window, p + 1, limit, len)) {
            PatternSet.Pattern m = patterns.longestAt(window, p, len);
            if (m != null && judge(m)) {
                return;
            }
        }
        int hold = len;
        for (int p = limit; p < len; p++) {
            PatternSet.Pattern m = patterns.longestAt(window, p, len);
            if (m != null && judge(m)) {
                return;
            }
            if (patterns.prefixAt(window, p, len)) {
                hold = p;
                break;
            }
        }
        carried = len - hold;
        System.arraycopy(window, hold, window, 0, carried);
    }

    private boolean judge(PatternSet.Pattern m) {
        SecretEntry e = store.entries().get(m.owner());
        boolean bound = e.boundTo(host);
        if (m.kind() != PatternSet.Kind.VALUE && !e.spec.usableBy(client)) {
            refusal = new Refused(SecretReasons.WRONG_CLIENT, e.name(), place);
        } else if (m.kind() == PatternSet.Kind.VALUE) {
            if (bound) {
                return false;
            }
            refusal = new Refused(SecretReasons.WRONG_HOST, e.name(), place + " (real value)");
        } else if (!bound) {
            refusal = new Refused(SecretReasons.WRONG_HOST, e.name(), place);
        } else if (e.spec.elsewhere() == SecretSpec.Elsewhere.FORWARD) {
            forwarded.add(e.name());
            return false;
        } else {
            refusal = new Refused(SecretReasons.WRONG_PLACE, e.name(), place);
        }
        return true;
    }

    @Override
    public String toString() {
        return "RequestBodyGuard[host=" + host + ", refused=" + (refusal != null) + "]";
    }
}
