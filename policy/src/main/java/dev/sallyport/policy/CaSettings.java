package dev.sallyport.policy;

import java.nio.file.Path;

/**
 * The {@code ca} section: the CA certificate and key PEM files, absolute. Both null means "the CA in the
 * state directory, created on first use" ({@link StateDirectory}); one without the other is refused.
 *
 * @param cert nullable
 * @param key  nullable
 */
public record CaSettings(Path cert, Path key) {

    public static final CaSettings STATE_DIRECTORY = new CaSettings(null, null);

    public CaSettings {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("ca: only one of cert and key (expected: both or neither)");
        }
    }

    /** True when the CA lives in the state directory. */
    public boolean inStateDirectory() {
        return cert == null;
    }
}
