package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.List;

/**
 * The {@code upstream} section: what the proxy trusts when it connects upstream. {@code trust: [system,
 * extra.pem]} gives systemTrust true plus one file; at least one source is required.
 */
public record UpstreamSettings(boolean systemTrust, List<Path> trustFiles) {

    public static final UpstreamSettings SYSTEM = new UpstreamSettings(true, List.of());

    public UpstreamSettings {
        trustFiles = List.copyOf(trustFiles);
        if (!systemTrust && trustFiles.isEmpty()) {
            throw new IllegalArgumentException("upstream.trust: empty (expected: 'system' and/or PEM files)");
        }
    }
}
