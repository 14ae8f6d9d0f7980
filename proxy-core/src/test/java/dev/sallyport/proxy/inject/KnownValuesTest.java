package dev.sallyport.proxy.inject;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Values a reload removes or changes stay scrubbed (within the bound), and are wiped when the proxy stops. */
class KnownValuesTest {

    private final Map<String, String> env = new HashMap<>();
    private SecretStore current;

    @Test
    void aValueRemovedOrChangedByAReloadIsStillScrubbed() throws Exception {
        String first = Fixtures.token("first_");
        String second = Fixtures.token("second_");
        env.put("A", first);
        SecretStore store = load();
        env.put("A", second);
        assertThat(swap(store, "A")).isEmpty();
        assertThat(swap(current, new String[0])).isEmpty();

        assertThat(current.isEmpty()).isTrue();
        assertThat(current.idle()).as("nothing to inject, but values to scrub").isFalse();
        assertThat(current.sensitive("api.example.com")).as("the host received the values").isTrue();
        assertThat(current.sensitive("other.example.com")).isFalse();
        String body = scrub(current, "a=" + first + " b=" + second + " c=" + java.util.Base64.getEncoder()
                .encodeToString(("user:" + first).getBytes(StandardCharsets.UTF_8)));
        assertThat(body).doesNotContain(first).doesNotContain(second).contains("[sallyport:redacted]");
        assertThat(current.known().counts()).isEqualTo(new KnownValues.Counts(0, 2));
        current.closeAll();
    }

    @Test
    void aValueInForceAgainIsNotRetiredTwice() throws Exception {
        env.put("A", Fixtures.token("again_"));
        swap(load(), new String[0]);
        swap(current, "A");
        assertThat(current.known().counts()).isEqualTo(new KnownValues.Counts(1, 0));
        current.closeAll();
    }

    @Test
    void beyondTheBoundTheOldestRetiredValueIsDroppedAndNamed() throws Exception {
        env.put("A", Fixtures.token("v0_"));
        current = load();
        List<String> values = new ArrayList<>(List.of(env.get("A")));
        List<String> dropped = new ArrayList<>();
        for (int i = 1; i <= KnownValues.MAX_RETIRED + 2; i++) {
            env.put("A", Fixtures.token("v" + i + "_"));
            values.add(env.get("A"));
            dropped.addAll(swap(current, "A"));
        }
        assertThat(dropped).containsExactly("A", "A");
        assertThat(current.known().counts()).isEqualTo(new KnownValues.Counts(1, KnownValues.MAX_RETIRED));
        String body = scrub(current, String.join(" ", values));
        assertThat(body).as("the two oldest are no longer scrubbed").contains(values.get(0)).contains(values.get(1));
        for (String v : values.subList(2, values.size())) {
            assertThat(body).doesNotContain(v);
        }
        current.closeAll();
    }

    @Test
    void closeAllWipesEveryKnownValue() throws Exception {
        String v = Fixtures.token("wipe_");
        env.put("A", v);
        swap(load(), new String[0]);
        PatternSet before = current.scrubPatterns();
        current.closeAll();
        assertThat(current.scrubPatterns().isEmpty()).isTrue();
        assertThat(before.findAll(v.getBytes(StandardCharsets.UTF_8), v.length())).as("the old set's bytes are zeroed")
                .isEmpty();
        assertThat(current.known().toString()).isEqualTo("KnownValues[inForce=0, retired=0]");
    }

    private SecretStore load() throws Exception {
        return SecretStore.load(policy("A").secrets(), Placeholders.withKey(Fixtures.KEY), env::get,
                InstantSource.system());
    }

    /**
     * What the holder does on a reload: a store for {@code names} from {@code old}, in force ({@link #current}), the
     * old one closed. Returns the secrets whose retired values were dropped.
     */
    private List<String> swap(SecretStore old, String... names) throws Exception {
        current = old.reload(policy(names));
        List<String> dropped = current.nowInForce();
        old.close();
        return dropped;
    }

    private static String scrub(SecretStore store, String text) throws ResponseDecodeException {
        ResponseScrubber scrubber = store.exchange("elsewhere.example.com").responseScrubber(ByteBufAllocator.DEFAULT, 1);
        List<io.netty.buffer.ByteBuf> out = new ArrayList<>();
        scrubber.onContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), out::add);
        scrubber.onLast(EmptyHttpHeaders.INSTANCE, out::add);
        return new String(Fixtures.drain(out), StandardCharsets.UTF_8);
    }

    private static Policy policy(String... names) throws Exception {
        StringBuilder yaml = new StringBuilder("rules: []\nsecrets:");
        if (names.length == 0) {
            yaml.append(" []\n");
        }
        for (String n : names) {
            yaml.append("\n  - name: ").append(n).append("\n    from: env:").append(n)
                    .append("\n    hosts: [api.example.com]\n    headers: [Authorization]\n");
        }
        return PolicyLoader.parse(yaml.toString(), "policy.yaml");
    }
}
