package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.net.IDN;
import java.text.Normalizer;
import java.util.Locale;

/**
 * Fuzz target, differential: a deny rule for {@code internal.example.com} and its subdomains before an allow rule
 * for {@code *.example.com}. Whatever CONNECT host the engine allows, a lenient resolver (Unicode folded with NFKC,
 * IDNA with unassigned code points, any case, trailing dots dropped) does not read as the denied name; the
 * normalizer throws nothing but IllegalArgumentException, and its result is a fixed point. Kept inputs:
 * {@code src/test/resources/dev/sallyport/policy/HostFuzzTestInputs/}.
 */
class HostFuzzTest {

    private static final PolicyEngine ENGINE = Engines.of("""
            rules:
              - name: internal
                action: deny
                hosts: [internal.example.com, "*.internal.example.com"]
              - name: example
                hosts: ["*.example.com"]
            """);

    @FuzzTest
    @DictionaryEntries({"internal", ".example.com", "xn--", "\u3002", "\uff0e", "\u0130", "\u212a", ".."})
    void aDeniedNameIsNeverReachedBySpelling(FuzzedDataProvider data) {
        String host = data.consumeRemainingAsString();
        String normal;
        try {
            normal = HostNames.normalize(host);
        } catch (IllegalArgumentException e) {
            normal = null;
        }
        if (normal != null) {
            assertThat(HostNames.normalize(normal)).as("normal form of %s is a fixed point", host).isEqualTo(normal);
        }
        Decision d = ENGINE.onConnect(host, 443, null);
        if (d.verdict() != Verdict.ALLOW) {
            return;
        }
        String read = lenient(host);
        assertThat(read.equals("internal.example.com") || read.endsWith(".internal.example.com"))
                .as("engine allowed %s; a lenient resolver reads %s", host, read).isFalse();
    }

    private static String lenient(String host) {
        String folded = Normalizer.normalize(host, Normalizer.Form.NFKC);
        try {
            folded = IDN.toASCII(folded, IDN.ALLOW_UNASSIGNED);
        } catch (IllegalArgumentException e) {
            // a resolver that cannot convert it sends it as it is
        }
        folded = folded.toLowerCase(Locale.ROOT);
        while (folded.endsWith(".")) {
            folded = folded.substring(0, folded.length() - 1);
        }
        return folded;
    }
}
