package dev.sallyport.proxy.inject;

import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import dev.sallyport.proxy.inject.PatternSet.Hit;
import dev.sallyport.proxy.inject.PatternSet.Kind;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

/**
 * Finds placeholders and values in one request head and computes the swapped headers. Pure: it reads
 * the headers, builds the replacement list, and changes nothing; {@link ExchangeSecrets} applies it.
 *
 * <p>Where it looks: every header name and value as sent, the value percent-decoded (up to 3 layers),
 * base64 fragments (any alignment, both alphabets, via the patterns), the credential of an
 * {@code Authorization}-style {@code Basic} value after base64 decoding, and the request target
 * (path and query) as sent and percent-decoded. A placeholder that would be swapped into a request that goes
 * upstream in cleartext is refused unless its secret allows cleartext. A placeholder anywhere else is never
 * swapped: toward a host its secret is not bound to it is refused, on its own hosts it is forwarded unchanged
 * (noted in {@link Outcome#forwarded}) or refused, as its secret's {@code elsewhere_on_own_hosts} says. A token
 * shaped like a derived placeholder that is none of the store's (stale, or from another state folder) is refused
 * in a header or the URL.
 */
final class RequestInspector {

    /** A header after injection: the name and the new value (same object when unchanged). */
    record Header(CharSequence name, CharSequence value) {
        @Override
        public String toString() {
            return "Header[" + name + "]";
        }
    }

    /** What the request carries: the headers to send, names injected, Basic tokens sent, or a refusal. */
    record Outcome(List<Header> headers, boolean changed, List<String> injected, List<String> forwarded,
                   List<byte[]> basicTokens, Refused refusal) {}

    private final SecretStore store;
    private final String host;
    private final UpstreamLeg leg;
    private final String client;
    private final PatternSet patterns;
    private final BitSet forwarded = new BitSet();
    private Refused refusal;

    RequestInspector(SecretStore store, String host, UpstreamLeg leg, String client) {
        this.store = store;
        this.host = host;
        this.leg = leg;
        this.client = client;
        this.patterns = store.patterns().request();
    }

    Outcome inspect(HttpHeaders headers, String rawTarget) {
        List<SecretEntry> entries = store.entries();
        BitSet injected = new BitSet();
        List<byte[]> basicTokens = new ArrayList<>(1);
        checkTarget(rawTarget);
        List<Header> out = new ArrayList<>(headers.size());
        boolean changed = false;
        var it = headers.iteratorCharSequence();
        while (it.hasNext()) {
            Map.Entry<CharSequence, CharSequence> h = it.next();
            CharSequence value = inspectHeader(h.getKey(), h.getValue(), injected, basicTokens);
            changed |= value != h.getValue();
            out.add(new Header(h.getKey(), value));
        }
        for (SecretEntry e : entries) {
            if (e.spec.require() && !injected.get(e.index) && e.boundTo(host) && e.spec.usableBy(client)) {
                refuse(SecretReasons.REQUIRED, e, "request without its placeholder");
            }
        }
        List<String> names = injected.stream().mapToObj(i -> entries.get(i).name()).toList();
        List<String> seen = forwarded.stream().mapToObj(i -> entries.get(i).name()).toList();
        return new Outcome(out, changed, names, seen, basicTokens, refusal);
    }

    private void checkTarget(String rawTarget) {
        byte[] raw = latin1(rawTarget);
        for (byte[] form : List.of(raw, EncodedForms.percentDecode(raw, 3), EncodedForms.formDecode(raw, 3))) {
            for (Hit hit : patterns.findAll(form, form.length)) {
                misplaced(hit, "url");
            }
            unknownPlaceholders(form, "url");
        }
    }

    /** Returns the value to send: the same object if unchanged. */
    private CharSequence inspectHeader(CharSequence name, CharSequence value, BitSet injected, List<byte[]> basicTokens) {
        String where = "header " + name;
        byte[] nameBytes = latin1(name);
        for (Hit hit : patterns.findAll(nameBytes, nameBytes.length)) {
            misplaced(hit, where);
        }
        byte[] raw = latin1(value);
        unknownPlaceholders(raw, where);
        BitSet rawHere = new BitSet();
        BitSet encodedHere = new BitSet();
        for (Hit hit : patterns.findAll(raw, raw.length)) {
            classify(hit, rawHere, encodedHere, where);
        }
        for (byte[] decoded : List.of(EncodedForms.percentDecode(raw, 3), EncodedForms.formDecode(raw, 3))) {
            if (decoded == raw) {
                continue;
            }
            for (Hit hit : patterns.findAll(decoded, decoded.length)) {
                if (hit.pattern().kind() == Kind.VALUE || !rawHere.get(hit.pattern().owner())) {
                    classify(new Hit(hit.position(), asEncoded(hit.pattern())), rawHere, encodedHere, where);
                }
            }
        }
        byte[] credential = basicCredential(raw);
        BitSet inBasic = new BitSet();
        if (credential != null) {
            unknownPlaceholders(credential, where + " (Basic credential)");
            for (Hit hit : patterns.findAll(credential, credential.length)) {
                if (hit.pattern().kind() == Kind.PLACEHOLDER) {
                    inBasic.set(hit.pattern().owner());
                } else {
                    classify(hit, rawHere, encodedHere, where);
                }
            }
        }
        encodedHere.andNot(inBasic);
        List<SecretEntry> swap = new ArrayList<>();
        for (SecretEntry e : store.entries()) {
            boolean raws = rawHere.get(e.index) || inBasic.get(e.index);
            if (!raws && !encodedHere.get(e.index)) {
                continue;
            }
            if (!e.spec.usableBy(client)) {
                refuse(SecretReasons.WRONG_CLIENT, e, where);
                continue;
            }
            if (!e.boundTo(host)) {
                refuse(SecretReasons.WRONG_HOST, e, where);
                continue;
            }
            if (!e.allowsHeader(name)) {
                elsewhere(e, where);
                continue;
            }
            if (encodedHere.get(e.index)) {     // only the plain form is swapped: the encoded one stays as it is
                elsewhere(e, where + " (encoded placeholder)");
            }
            if (!raws) {
                continue;
            }
            if (leg == UpstreamLeg.CLEARTEXT && !e.spec.allowCleartext()) {
                refuse(SecretReasons.CLEARTEXT, e, where + " (request goes upstream in cleartext)");
            } else {
                swap.add(e);
            }
        }
        if (swap.isEmpty() || refusal != null) {
            return value;
        }
        byte[] result = raw;
        boolean basicDone = false;
        for (SecretEntry e : swap) {
            SecretValue v = store.valueOf(e);
            if (v == null) {
                refuse(SecretReasons.UNAVAILABLE, e, where);
                return value;
            }
            byte[] real = v.copyBytes();
            if (rawHere.get(e.index)) {
                result = replaceAll(result, e.placeholderBytes, real);
            }
            if (inBasic.get(e.index)) {
                credential = replaceAll(credential, e.placeholderBytes, real);
                basicDone = true;
            }
            Arrays.fill(real, (byte) 0);
            injected.set(e.index);
        }
        if (basicDone) {
            byte[] token = Base64.getEncoder().encode(credential);
            basicTokens.add(token);
            result = concat(schemePrefix(raw), token);
        }
        return new AsciiString(result, false);
    }

    private void classify(Hit hit, BitSet rawHere, BitSet encodedHere, String where) {
        switch (hit.pattern().kind()) {
            case PLACEHOLDER -> rawHere.set(hit.pattern().owner());
            case PLACEHOLDER_ENCODED -> encodedHere.set(hit.pattern().owner());
            case VALUE -> valueSeen(hit, where);
        }
    }

    /** A hit in a place where placeholders are never swapped (URL, header name). */
    private void misplaced(Hit hit, String where) {
        SecretEntry e = store.entries().get(hit.pattern().owner());
        if (hit.pattern().kind() == Kind.VALUE) {
            valueSeen(hit, where);
        } else if (!e.spec.usableBy(client)) {
            refuse(SecretReasons.WRONG_CLIENT, e, where);
        } else if (e.boundTo(host)) {
            elsewhere(e, where);
        } else {
            refuse(SecretReasons.WRONG_HOST, e, where);
        }
    }

    /** A placeholder on its own host where it is not swapped: forwarded unchanged, or refused, as its secret says. */
    private void elsewhere(SecretEntry e, String where) {
        if (e.spec.elsewhere() == SecretSpec.Elsewhere.FORWARD) {
            forwarded.set(e.index);
        } else {
            refuse(SecretReasons.WRONG_PLACE, e, where);
        }
    }

    /**
     * Refuses a token in {@code bytes} shaped like a derived placeholder that none of the store's secrets has: a
     * placeholder of an earlier run, another policy or another state folder would go upstream as a bare token that
     * cannot work, so the client hears why instead.
     */
    private void unknownPlaceholders(byte[] bytes, String where) {
        for (int at = Placeholders.nextDerivedShape(bytes, 0); at >= 0; at = Placeholders.nextDerivedShape(bytes, at + 1)) {
            if (!isKnownPlaceholderAt(bytes, at)) {
                refuse(SecretReasons.UNKNOWN_PLACEHOLDER, null, where);
                return;
            }
        }
    }

    private boolean isKnownPlaceholderAt(byte[] bytes, int at) {
        for (SecretEntry e : store.entries()) {
            byte[] p = e.placeholderBytes;
            if (at + p.length <= bytes.length && Arrays.equals(bytes, at, at + p.length, p, 0, p.length)) {
                return true;
            }
        }
        return false;
    }

    /** A real value in a request: the sandbox should never hold one; refused unless it goes to its own hosts. */
    private void valueSeen(Hit hit, String where) {
        SecretEntry e = store.entries().get(hit.pattern().owner());
        if (!e.boundTo(host)) {
            refuse(SecretReasons.WRONG_HOST, e, where + " (real value)");
        }
    }

    private static PatternSet.Pattern asEncoded(PatternSet.Pattern p) {
        return p.kind() == Kind.PLACEHOLDER ? new PatternSet.Pattern(p.bytes(), p.owner(), Kind.PLACEHOLDER_ENCODED) : p;
    }

    /** {@code e} is null for a refusal no secret is named in ({@code secret_unknown_placeholder}). */
    private void refuse(String reason, SecretEntry e, String where) {
        if (refusal == null || rank(reason) > rank(refusal.reason())) {
            refusal = new Refused(reason, e == null ? null : e.name(), where);
        }
    }

    private static int rank(String reason) {
        return switch (reason) {
            case SecretReasons.WRONG_CLIENT -> 7;
            case SecretReasons.WRONG_HOST -> 6;
            case SecretReasons.WRONG_PLACE -> 5;
            case SecretReasons.CLEARTEXT -> 4;
            case SecretReasons.UNKNOWN_PLACEHOLDER -> 3;
            case SecretReasons.UNAVAILABLE -> 2;
            default -> 1;
        };
    }

    /** The decoded credential of {@code Basic <base64>}, or null if the value is not that. */
    static byte[] basicCredential(byte[] value) {
        int start = skipSpaces(value, 0);
        if (value.length - start < 6 || !new String(value, start, 5, StandardCharsets.ISO_8859_1).equalsIgnoreCase("basic")
                || value[start + 5] != ' ') {
            return null;
        }
        int from = skipSpaces(value, start + 5);
        int to = value.length;
        while (to > from && value[to - 1] == ' ') {
            to--;
        }
        if (to == from) {
            return null;
        }
        try {
            return Base64.getDecoder().decode(Arrays.copyOfRange(value, from, to));
        } catch (IllegalArgumentException notBase64) {
            return null;
        }
    }

    private static byte[] schemePrefix(byte[] value) {
        int start = skipSpaces(value, 0);
        return Arrays.copyOfRange(value, 0, skipSpaces(value, start + 5));
    }

    private static int skipSpaces(byte[] b, int i) {
        while (i < b.length && (b[i] == ' ' || b[i] == '\t')) {
            i++;
        }
        return i;
    }

    static byte[] replaceAll(byte[] in, byte[] find, byte[] with) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + with.length);
        int i = 0;
        while (i < in.length) {
            if (i + find.length <= in.length && Arrays.equals(in, i, i + find.length, find, 0, find.length)) {
                out.writeBytes(with);
                i += find.length;
            } else {
                out.write(in[i++]);
            }
        }
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** One byte per char; chars above 0xFF (never produced by the HTTP/1 decoder) become '?'. */
    static byte[] latin1(CharSequence s) {
        if (s instanceof AsciiString a) {
            return a.toByteArray();
        }
        byte[] out = new byte[s.length()];
        for (int i = 0; i < out.length; i++) {
            char c = s.charAt(i);
            out[i] = c > 0xFF ? (byte) '?' : (byte) c;
        }
        return out;
    }
}
