package dev.sallyport.proxy.registry;

import java.util.List;
import java.util.Map;

/**
 * A package document after its registry's rules: the body to answer with (in the form the client asked for), the
 * versions taken out with their reasons, and the verdict for every version the document listed (for the files
 * asked for later).
 *
 * @param body     the answer's bytes, the first {@code length} of the array (taken over, not copied)
 * @param verdicts every listed version to its reason, {@code ""} for an allowed one
 */
public record FilteredDocument(byte[] body, int length, String contentType, List<VersionVerdict> refused,
                               Map<String, String> verdicts) {

    public FilteredDocument {
        if (length < 0 || length > body.length) {
            throw new IllegalArgumentException("length: " + length + " (expected: 0.." + body.length + ")");
        }
        refused = List.copyOf(refused);
        verdicts = Map.copyOf(verdicts);
    }

    /** The answer as text, for tests and logs. */
    public String text() {
        return new String(body, 0, length, java.nio.charset.StandardCharsets.UTF_8);
    }
}
