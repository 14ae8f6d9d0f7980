package dev.sallyport.proxy.inject;

import dev.sallyport.proxy.inject.PatternSet.Kind;
import dev.sallyport.proxy.inject.PatternSet.Pattern;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The two pattern sets of a store. {@code request}: every placeholder (raw and base64 fragments) and every
 * loaded value in all its forms, to find misuse in requests. {@code scrub}: every loaded value in all its
 * forms (raw, base64 fragments in both alphabets, percent-encoded, JSON-escaped), removed from responses.
 */
record StorePatterns(PatternSet request, PatternSet scrub) {

    static StorePatterns build(List<SecretEntry> entries) {
        List<Pattern> request = new ArrayList<>();
        List<Pattern> scrub = new ArrayList<>();
        for (SecretEntry e : entries) {
            request.add(new Pattern(e.placeholderBytes, e.index, Kind.PLACEHOLDER));
            for (byte[] f : EncodedForms.base64Fragments(e.placeholderBytes)) {
                request.add(new Pattern(f, e.index, Kind.PLACEHOLDER_ENCODED));
            }
            if (e.state() instanceof SecretEntry.State.Loaded l && !l.value().isWiped()) {
                byte[] v = l.value().copyBytes();
                for (byte[] form : valueForms(v)) {
                    Pattern p = new Pattern(form, e.index, Kind.VALUE);
                    request.add(p);
                    scrub.add(p);
                }
                Arrays.fill(v, (byte) 0);
            }
        }
        return new StorePatterns(new PatternSet(request), new PatternSet(scrub));
    }

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
        return "StorePatterns[request=" + request + ", scrub=" + scrub + "]";
    }
}
