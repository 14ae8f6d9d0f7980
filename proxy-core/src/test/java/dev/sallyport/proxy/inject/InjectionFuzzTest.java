package dev.sallyport.proxy.inject;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sallyport.proxy.inject.InjectionResult.Injected;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Fuzz target: the placeholder inspector and injection. Request heads built from fuzzed bytes with the two
 * secrets' placeholders and real values (in their encoded forms) spliced in, toward a secret's host, the other
 * secret's host or a stranger, over TLS or cleartext. Invariants: never an exception; a real value leaves only
 * in a header its secret names, toward a host it is bound to, over TLS, and only when injection says so; toward
 * a host a secret is not bound to, neither its placeholder nor its value goes on. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/inject/InjectionFuzzTestInputs/}.
 */
class InjectionFuzzTest {

    private static final String GH = "ghp_fuzz0123456789abcdefghijklmnopqrstuvwx";
    private static final String API = "aw/fuzz+/=\"\\ ~x0123456789ABCDEF";
    private static final SecretStore STORE;
    private static final Map<String, Secret> SECRETS;
    private static final List<String> HOSTS = List.of("github.example.com", "api.llm.example.com", "evil.example.net");
    private static final List<String> NAMES = List.of("Authorization", "X-Api-Key", "Cookie", "Proxy-Authorization",
            "X-Other");

    private record Secret(String value, String placeholder, Set<String> hosts, String header, List<byte[]> forms) {}

    static {
        try {
            STORE = Fixtures.store(Map.of("GH", GH, "API", API),
                    Fixtures.env("GH", List.of("github.example.com"), List.of("Authorization")),
                    Fixtures.env("API", List.of("*.llm.example.com"), List.of("X-Api-Key")));
        } catch (SecretLoadException e) {
            throw new IllegalStateException(e);
        }
        SECRETS = Map.of(
                "GH", new Secret(GH, STORE.placeholders().get("GH"), Set.of("github.example.com"), "authorization",
                        Fixtures.forbiddenForms(GH)),
                "API", new Secret(API, STORE.placeholders().get("API"), Set.of("api.llm.example.com"), "x-api-key",
                        Fixtures.forbiddenForms(API)));
    }

    @FuzzTest
    void noRealValueTowardAWrongHost(FuzzedDataProvider data) {
        String host = HOSTS.get(data.consumeInt(0, HOSTS.size() - 1));
        UpstreamLeg leg = data.consumeBoolean() ? UpstreamLeg.TLS : UpstreamLeg.CLEARTEXT;
        HttpHeaders headers = new DefaultHttpHeaders();
        for (int n = data.consumeInt(0, 5); n > 0; n--) {
            String name = data.consumeBoolean() ? NAMES.get(data.consumeInt(0, NAMES.size() - 1))
                    : token(data.consumeString(12));
            String value = value(data);
            try {
                headers.add(name, value);
            } catch (IllegalArgumentException e) {
                // a value Netty's validation refuses never reaches injection from a decoded request either
                assertThat(e).hasMessageContaining("Validation failed");
            }
        }
        String target = "/" + value(data);
        HttpHeaders before = new DefaultHttpHeaders().add(headers);

        InjectionResult result = STORE.exchange(host, leg).inject(headers, "GET " + target);

        if (!(result instanceof Injected injected)) {
            assertThat(headers).as("a refusal changes nothing").isEqualTo(before);
            return;
        }
        SECRETS.forEach((name, s) -> {
            boolean bound = s.hosts().contains(host);
            boolean sentByClient = holdsAForm(before, target, s);
            headers.forEach(h -> {
                String where = h.getKey().toLowerCase(Locale.ROOT);
                byte[] value = RequestInspector.latin1(h.getValue());
                boolean real = Fixtures.contains(value, Fixtures.bytes(s.value()));
                if (real) {
                    assertThat(bound).as("%s's value toward %s", name, host).isTrue();
                    assertThat(sentByClient || (leg == UpstreamLeg.TLS && where.equals(s.header())
                            && injected.secrets().contains(name)))
                            .as("%s's value injected in %s toward %s over %s", name, where, host, leg).isTrue();
                }
                if (!bound) {
                    for (byte[] form : s.forms()) {
                        assertThat(Fixtures.contains(value, form)).as("a form of %s toward %s", name, host).isFalse();
                    }
                    assertThat(h.getValue()).as("%s's placeholder toward %s", name, host).doesNotContain(s.placeholder());
                }
            });
            if (!bound) {
                assertThat(target).as("%s's placeholder in the URL toward %s", name, host).doesNotContain(s.placeholder());
                for (byte[] form : s.forms()) {
                    assertThat(Fixtures.contains(Fixtures.bytes(target), form)).as("%s's value in the URL", name).isFalse();
                }
            }
        });
    }

    private static boolean holdsAForm(HttpHeaders headers, String target, Secret s) {
        StringBuilder all = new StringBuilder(target);
        headers.forEach(h -> all.append('\n').append(h.getValue()));
        byte[] bytes = Fixtures.bytes(all.toString());
        return s.forms().stream().anyMatch(f -> Fixtures.contains(bytes, f));
    }

    /** A header value or target: fuzzed text with placeholders and values (plain or encoded) spliced in. */
    private static String value(FuzzedDataProvider data) {
        StringBuilder sb = new StringBuilder();
        for (int n = data.consumeInt(0, 3); n > 0; n--) {
            sb.append(data.consumeString(24));
            Secret s = data.consumeBoolean() ? SECRETS.get("GH") : SECRETS.get("API");
            switch (data.consumeInt(0, 4)) {
                case 0 -> sb.append("Bearer ").append(s.placeholder());
                case 1 -> sb.append(s.placeholder());
                case 2 -> sb.append(s.value());
                case 3 -> sb.append(new String(s.forms().get(data.consumeInt(0, s.forms().size() - 1)),
                        java.nio.charset.StandardCharsets.ISO_8859_1));
                default -> sb.append("Basic ").append(java.util.Base64.getEncoder().encodeToString(
                        ("user:" + s.placeholder()).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)));
            }
        }
        sb.append(data.consumeString(24));
        return sb.toString().replaceAll("[\\x00-\\x1f\\x7f\\u0100-\\uffff]", "");
    }

    private static String token(String s) {
        String t = s.replaceAll("[^A-Za-z0-9-]", "");
        return t.isEmpty() ? "X-Fuzz" : t;
    }
}
