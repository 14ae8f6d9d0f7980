package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.List;

/**
 * The {@code upstream} section: what the proxy trusts when it connects upstream, and the parent proxy it connects
 * through, if any. {@code trust: [system, extra.pem]} gives systemTrust true plus one file; at least one source is
 * required.
 *
 * @param proxy nullable: the parent proxy ({@code upstream.proxy}); null dials every destination directly
 */
public record UpstreamSettings(boolean systemTrust, List<Path> trustFiles, UpstreamProxy proxy) {

    public static final UpstreamSettings SYSTEM = new UpstreamSettings(true, List.of());

    public UpstreamSettings {
        trustFiles = List.copyOf(trustFiles);
        if (!systemTrust && trustFiles.isEmpty()) {
            throw new IllegalArgumentException("upstream.trust: empty (expected: 'system' and/or PEM files)");
        }
    }

    /** Settings with no parent proxy. */
    public UpstreamSettings(boolean systemTrust, List<Path> trustFiles) {
        this(systemTrust, trustFiles, null);
    }

    /** The same trust with {@code parent} as the parent proxy (null: none). */
    public UpstreamSettings withProxy(UpstreamProxy parent) {
        return new UpstreamSettings(systemTrust, trustFiles, parent);
    }
}
