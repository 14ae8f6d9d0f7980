package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static dev.sallyport.proxy.inject.Fixtures.env;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.inject.InjectionResult.Refused;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RequestBodyGuardTest {

    private final String value = Fixtures.token("gho_");
    private SecretStore store;
    private SecretStore refusing;       // elsewhere_on_own_hosts: refuse
    private String ph;
    private RequestBodyGuard last;

    @BeforeEach
    void setUp() throws Exception {
        store = Fixtures.store(Map.of("GH", value), env("GH", List.of("api.example.com"), List.of("Authorization")));
        refusing = Fixtures.store(Map.of("GH", value),
                Fixtures.refusingElsewhere(env("GH", List.of("api.example.com"), List.of("Authorization"))));
        ph = store.placeholders().get("GH");
    }

    private Refused feed(String host, byte[] body, int chunk) {
        return feed(store, host, body, chunk);
    }

    private Refused feed(SecretStore from, String host, byte[] body, int chunk) {
        RequestBodyGuard g = from.exchange(host).bodyGuard();
        last = g;
        for (int i = 0; i < body.length; i += chunk) {
            ByteBuf b = Unpooled.wrappedBuffer(body, i, Math.min(chunk, body.length - i));
            int before = b.readerIndex();
            Refused r = g.check(b);
            assertThat(b.readerIndex()).isEqualTo(before);
            if (r != null) {
                return r;
            }
        }
        return g.finish();
    }

    @Test
    void placeholderSplitAcrossOneByteChunksIsFound() {
        byte[] body = bytes("{\"title\":\"x\",\"body\":\"" + ph + "\"}");
        assertThat(feed("api.example.com", body, 1)).as("its own host: goes on unchanged").isNull();
        assertThat(last.forwarded()).containsExactly("GH");
        assertThat(feed(refusing, "api.example.com", body, 1)).isEqualTo(new Refused("secret_wrong_place", "GH", "body"));
        assertThat(feed("gist.example.net", body, 3)).isEqualTo(new Refused("secret_wrong_host", "GH", "body"));
        assertThat(last.forwarded()).isEmpty();
    }

    @Test
    void placeholderAtTheVeryEndIsFoundByFinish() {
        assertThat(feed("api.example.com", bytes("tail:" + ph), 1000)).isNull();
        assertThat(last.forwarded()).containsExactly("GH");
        assertThat(feed(refusing, "api.example.com", bytes("tail:" + ph), 1000))
                .isEqualTo(new Refused("secret_wrong_place", "GH", "body"));
        assertThat(feed("gist.example.net", bytes("tail:" + ph), 1000))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "body"));
    }

    @Test
    void onItsOwnHostTheBodyIsStillSearchedToTheEndForAnotherHostsPlaceholder() throws Exception {
        SecretStore two = Fixtures.store(Map.of("GH", value, "NPM", Fixtures.token("npm_")),
                env("GH", List.of("api.example.com"), List.of("Authorization")),
                env("NPM", List.of("registry.example.com"), List.of("Authorization")));
        String npmPh = two.placeholders().get("NPM");
        byte[] body = bytes("{\"a\":\"" + two.placeholders().get("GH") + "\",\"b\":\"" + npmPh + "\"}");
        assertThat(feed(two, "api.example.com", body, 7)).isEqualTo(new Refused("secret_wrong_host", "NPM", "body"));
    }

    @Test
    void base64PlaceholderAndRealValueToOtherHostsAreFound() {
        byte[] b64 = bytes(Base64.getEncoder().encodeToString(bytes("{\"token\":\"" + ph + "\"}")));
        assertThat(feed("paste.example.net", b64, 5)).isEqualTo(new Refused("secret_wrong_host", "GH", "body"));
        assertThat(feed("paste.example.net", bytes("leak=" + value), 2))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "body (real value)"));
        assertThat(feed("api.example.com", bytes("own=" + value), 2)).isNull();
    }

    @Test
    void cleanBodiesPass() {
        byte[] body = new byte[100_000];
        Fixtures.RANDOM.nextBytes(body);
        assertThat(feed("api.example.com", body, 8192)).isNull();
        assertThat(feed("api.example.com", bytes("sallyport-ph-but-not-ours"), 1)).isNull();
        assertThat(SecretStore.empty().exchange("a.example.com").bodyGuard().idle()).isTrue();
    }
}
