package dev.sallyport.proxy.inject;

import dev.sallyport.proxy.inject.PatternSet.Kind;
import dev.sallyport.proxy.inject.PatternSet.Pattern;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The request patterns of a store: every placeholder (raw and base64 fragments) and every loaded value in all
 * its forms, to find misuse in requests. What responses are scrubbed of is wider (every value the process ever
 * loaded, in the same forms) and lives in {@link KnownValues}.
 */
record StorePatterns(PatternSet request) {

    static StorePatterns build(List<SecretEntry> entries) {
        List<Pattern> request = new ArrayList<>();
        for (SecretEntry e : entries) {
            request.add(new Pattern(e.placeholderBytes, e.index, Kind.PLACEHOLDER));
            for (byte[] f : EncodedForms.base64Fragments(e.placeholderBytes)) {
                request.add(new Pattern(f, e.index, Kind.PLACEHOLDER_ENCODED));
            }
            if (e.state() instanceof SecretEntry.State.Loaded l && !l.value().isWiped()) {
                byte[] v = l.value().copyBytes();
                for (byte[] form : valueForms(v)) {
                    request.add(new Pattern(form, e.index, Kind.VALUE));
                }
                Arrays.fill(v, (byte) 0);
            }
        }
        return new StorePatterns(new PatternSet(request));
    }

    /** The forms of a value that are searched for: raw, base64 fragments, percent-encoded, JSON-escaped. */
    static List<byte[]> valueForms(byte[] v) {
        List<byte[]> forms = new ArrayList<>();
        forms.add(v.clone());
        forms.addAll(EncodedForms.base64Fragments(v));
        forms.addAll(EncodedForms.percentForms(v));
        forms.addAll(EncodedForms.jsonForms(v));
        return forms;
    }

    @Override
    public String toString() {
        return "StorePatterns[request=" + request + "]";
    }
}
