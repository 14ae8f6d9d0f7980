package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.env;
import static dev.sallyport.proxy.inject.Fixtures.spec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.inject.InjectionResult.Injected;
import dev.sallyport.proxy.inject.InjectionResult.Refused;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class InjectionTest {

    private final String gh = Fixtures.token("ghp_");
    private final String npm = Fixtures.token("npm_");
    private final String api = Fixtures.awkwardToken();
    private SecretStore store;
    private SecretStore refusing;       // the same secrets with elsewhere_on_own_hosts: refuse
    private String ghPh;
    private String npmPh;
    private String apiPh;

    @BeforeEach
    void setUp() throws Exception {
        store = Fixtures.store(Map.of("GH", gh, "NPM", npm, "API", api),
                env("GH", List.of("github.example.com", "api.github.example.com"), List.of("Authorization")),
                env("NPM", List.of("registry.example.com"), List.of("Authorization")),
                env("API", List.of("*.llm.example.com"), List.of("X-Api-Key")));
        refusing = Fixtures.store(Map.of("GH", gh, "NPM", npm, "API", api),
                Fixtures.refusingElsewhere(env("GH", List.of("github.example.com", "api.github.example.com"),
                        List.of("Authorization"))),
                Fixtures.refusingElsewhere(env("NPM", List.of("registry.example.com"), List.of("Authorization"))),
                Fixtures.refusingElsewhere(env("API", List.of("*.llm.example.com"), List.of("X-Api-Key"))));
        ghPh = store.placeholders().get("GH");
        npmPh = store.placeholders().get("NPM");
        apiPh = store.placeholders().get("API");
    }

    private static HttpHeaders headers(String... nameValues) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < nameValues.length; i += 2) {
            h.add(nameValues[i], nameValues[i + 1]);
        }
        return h;
    }

    private static String basic(String userPass) {
        return "Basic " + Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void bearerIsSwappedOnABoundHost() {
        HttpHeaders h = headers("Host", "registry.example.com", "Authorization", "Bearer " + npmPh, "Accept", "*/*");
        InjectionResult r = store.exchange("registry.example.com").inject(h, "/pkg");
        assertThat(r).isEqualTo(new Injected(List.of("NPM")));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + npm);
        assertThat(h.names()).containsExactly("Host", "Authorization", "Accept", "accept-encoding");
        assertThat(h.get("Accept-Encoding")).isEqualTo("identity");
    }

    @Test
    void overCleartextAPlaceholderIsRefusedUnlessItsSecretAllowsCleartext() throws Exception {
        HttpHeaders h = headers("Authorization", "Bearer " + npmPh);
        InjectionResult r = store.exchange("registry.example.com", UpstreamLeg.CLEARTEXT).inject(h, "/pkg");
        assertThat(r).isEqualTo(new Refused(SecretReasons.CLEARTEXT, "NPM",
                "header Authorization (request goes upstream in cleartext)"));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + npmPh);
        HttpHeaders b = headers("Authorization", basic("x-access-token:" + ghPh));
        assertThat(store.exchange("github.example.com", UpstreamLeg.CLEARTEXT).inject(b, "/x"))
                .isEqualTo(new Refused(SecretReasons.CLEARTEXT, "GH",
                        "header Authorization (request goes upstream in cleartext)"));
        // another host's placeholder is still the more serious refusal
        HttpHeaders other = headers("Authorization", "Bearer " + npmPh, "X-Api-Key", apiPh);
        assertThat(((Refused) store.exchange("registry.example.com", UpstreamLeg.CLEARTEXT).inject(other, "/"))
                .reason()).isEqualTo(SecretReasons.WRONG_HOST);
        assertThat(store.exchange("registry.example.com", UpstreamLeg.CLEARTEXT).inject(headers("Accept", "*/*"), "/"))
                .isEqualTo(new Injected(List.of()));

        SecretStore loose = Fixtures.store(Map.of("OLD", npm), new SecretSpec("OLD", 1,
                new SecretSource.Env("OLD"), List.of(HostPattern.parse("legacy.example.com")),
                List.of("Authorization"), null, false, false, true));
        HttpHeaders l = headers("Authorization", "Bearer " + loose.placeholders().get("OLD"));
        assertThat(loose.exchange("legacy.example.com", UpstreamLeg.CLEARTEXT).inject(l, "/"))
                .isEqualTo(new Injected(List.of("OLD")));
        assertThat(l.get("Authorization")).isEqualTo("Bearer " + npm);
    }

    @Test
    void tokenSchemeAndCustomHeaderWork() {
        HttpHeaders h = headers("authorization", "token " + ghPh);
        assertThat(store.exchange("api.github.example.com").inject(h, "/user")).isEqualTo(new Injected(List.of("GH")));
        assertThat(h.get("Authorization")).isEqualTo("token " + gh);

        HttpHeaders k = headers("x-api-key", apiPh);
        assertThat(store.exchange("eu.llm.example.com").inject(k, "/v1/chat")).isEqualTo(new Injected(List.of("API")));
        assertThat(k.get("X-Api-Key")).isEqualTo(api);
    }

    @Test
    void basicAuthIsDecodedSwappedAndReencoded_inUserOrPassword() {
        HttpHeaders pass = headers("Authorization", basic("x-access-token:" + ghPh));
        assertThat(store.exchange("github.example.com").inject(pass, "/acme/repo.git/info/refs?service=git-upload-pack"))
                .isEqualTo(new Injected(List.of("GH")));
        assertThat(pass.get("Authorization")).isEqualTo(basic("x-access-token:" + gh));

        HttpHeaders user = headers("Authorization", "basic   " + Base64.getEncoder().encodeToString(
                (ghPh + ":x-oauth-basic").getBytes(StandardCharsets.US_ASCII)));
        assertThat(store.exchange("github.example.com").inject(user, "/")).isInstanceOf(Injected.class);
        assertThat(user.get("Authorization")).isEqualTo("basic   " + Base64.getEncoder().encodeToString(
                (gh + ":x-oauth-basic").getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void twoSecretsInOneRequest() throws Exception {
        SecretStore s = Fixtures.store(Map.of("A", gh, "B", npm),
                env("A", List.of("h.example.com"), List.of("Authorization")),
                env("B", List.of("h.example.com"), List.of("X-Second")));
        HttpHeaders h = headers("Authorization", "Bearer " + s.placeholders().get("A"), "X-Second", s.placeholders().get("B"));
        assertThat(s.exchange("h.example.com").inject(h, "/")).isEqualTo(new Injected(List.of("A", "B")));
        assertThat(h.get("X-Second")).isEqualTo(npm);
    }

    @Test
    void placeholderToAnotherHostIsRefusedAndHeadersStayUnchanged() {
        HttpHeaders h = headers("Authorization", "Bearer " + ghPh);
        InjectionResult r = store.exchange("evil.example.net").inject(h, "/");
        assertThat(r).isEqualTo(new Refused("secret_wrong_host", "GH", "header Authorization"));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + ghPh);
        assertThat(h.contains("Accept-Encoding")).isFalse();
    }

    @Test
    void lookalikeHostsAreNotBound() {
        for (String host : List.of("github.example.com.evil.net", "evilgithub.example.com", "example.com",
                "llm.example.com")) {
            HttpHeaders h = headers("Authorization", "Bearer " + ghPh, "X-Api-Key", apiPh);
            assertThat(store.exchange(host).inject(h, "/")).as(host)
                    .isInstanceOfSatisfying(Refused.class, f -> assertThat(f.reason()).isEqualTo("secret_wrong_host"));
        }
    }

    @Test
    void basicAuthPlaceholderToTheWrongHostIsRefused() {
        HttpHeaders h = headers("Authorization", basic("git:" + ghPh));
        assertThat(store.exchange("gitlab.example.org").inject(h, "/"))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "header Authorization"));
    }

    @Test
    void placeholderInAnUnlistedHeaderOfItsOwnHostGoesOnUnchangedOrIsRefusedAsTheSecretSays() {
        HttpHeaders h = headers("X-Forwarded-Token", ghPh);
        assertThat(store.exchange("github.example.com").inject(h, "/"))
                .isEqualTo(new Injected(List.of(), List.of("GH")));
        assertThat(h.get("X-Forwarded-Token")).as("never swapped outside a listed header").isEqualTo(ghPh);
        HttpHeaders cookie = headers("Cookie", "session=abc; t=" + ghPh);
        assertThat(store.exchange("github.example.com").inject(cookie, "/"))
                .isEqualTo(new Injected(List.of(), List.of("GH")));
        assertThat(cookie.get("Cookie")).isEqualTo("session=abc; t=" + ghPh);

        assertThat(refusing.exchange("github.example.com").inject(headers("X-Forwarded-Token", ghPh), "/"))
                .isEqualTo(new Refused("secret_wrong_place", "GH", "header X-Forwarded-Token"));
        assertThat(refusing.exchange("github.example.com").inject(headers("Cookie", "t=" + ghPh), "/"))
                .isInstanceOfSatisfying(Refused.class, f -> assertThat(f.reason()).isEqualTo("secret_wrong_place"));
    }

    @Test
    void aPlaceholderInBothAListedAndAnUnlistedHeaderIsSwappedOnlyInTheListedOne() {
        HttpHeaders h = headers("Authorization", "Bearer " + ghPh, "X-Echo", "token " + ghPh);
        assertThat(store.exchange("github.example.com").inject(h, "/"))
                .isEqualTo(new Injected(List.of("GH"), List.of("GH")));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + gh);
        assertThat(h.get("X-Echo")).isEqualTo("token " + ghPh);
    }

    @Test
    void placeholderInHeaderNameIsForwardedOnItsOwnHostOrWrongPlace() {
        HttpHeaders h = headers("X-" + ghPh, "1");
        assertThat(store.exchange("github.example.com").inject(h, "/"))
                .isEqualTo(new Injected(List.of(), List.of("GH")));
        assertThat(h.names()).contains("X-" + ghPh);
        assertThat(refusing.exchange("github.example.com").inject(headers("X-" + ghPh, "1"), "/"))
                .isInstanceOfSatisfying(Refused.class, f -> assertThat(f.reason()).isEqualTo("secret_wrong_place"));
        assertThat(store.exchange("other.example.net").inject(headers("X-" + ghPh, "1"), "/"))
                .isInstanceOfSatisfying(Refused.class, f -> assertThat(f.reason()).isEqualTo("secret_wrong_host"));
    }

    @Test
    void placeholderInTheUrl_raw_percentEncoded_base64_isForwardedOnItsOwnHostAndRefusedElsewhere() {
        String pct = URLEncoder.encode(ghPh, StandardCharsets.UTF_8).replace("s", "%73").replace("-", "%2D");
        String doublePct = pct.replace("%", "%25");
        String b64 = Base64.getUrlEncoder().encodeToString(("{\"t\":\"" + ghPh + "\"}").getBytes(StandardCharsets.US_ASCII));
        for (String target : List.of("/x?token=" + ghPh, "/x?token=" + pct, "/x?token=" + doublePct, "/x/" + b64,
                "https://github.example.com/" + ghPh)) {
            assertThat(store.exchange("github.example.com").inject(headers(), target)).as(target)
                    .isEqualTo(new Injected(List.of(), List.of("GH")));
            assertThat(refusing.exchange("github.example.com").inject(headers(), target)).as(target)
                    .isEqualTo(new Refused("secret_wrong_place", "GH", "url"));
            assertThat(store.exchange("elsewhere.example.net").inject(headers(), target)).as(target)
                    .isEqualTo(new Refused("secret_wrong_host", "GH", "url"));
        }
    }

    @Test
    void encodedPlaceholderInAListedHeaderIsNeverSwapped() {
        String b64 = Base64.getEncoder().encodeToString(("x" + ghPh).getBytes(StandardCharsets.US_ASCII));
        HttpHeaders h = headers("Authorization", "Bearer " + b64);
        assertThat(store.exchange("github.example.com").inject(h, "/"))
                .isEqualTo(new Injected(List.of(), List.of("GH")));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + b64);
        HttpHeaders p = headers("Authorization", "Bearer %73" + ghPh.substring(1));
        assertThat(store.exchange("github.example.com").inject(p, "/"))
                .isEqualTo(new Injected(List.of(), List.of("GH")));
        assertThat(p.get("Authorization")).isEqualTo("Bearer %73" + ghPh.substring(1));
        assertThat(refusing.exchange("github.example.com").inject(headers("Authorization", "Bearer " + b64), "/"))
                .isEqualTo(new Refused("secret_wrong_place", "GH", "header Authorization (encoded placeholder)"));
        assertThat(refusing.exchange("github.example.com").inject(headers("Authorization", "Bearer %73"
                + ghPh.substring(1)), "/"))
                .isEqualTo(new Refused("secret_wrong_place", "GH", "header Authorization (encoded placeholder)"));
    }

    @Test
    void aPlaceholderOfAnotherKeyOrPolicyIsRefusedWithItsOwnReasonInHeadersAndTheUrl() throws Exception {
        String stale = Placeholders.ephemeral().derive("GH");
        assertThat(stale).isNotEqualTo(ghPh).startsWith(Placeholders.PREFIX);
        for (HttpHeaders h : List.of(headers("Authorization", "Bearer " + stale),
                headers("Authorization", basic("x-access-token:" + stale)), headers("X-Token", stale))) {
            assertThat(store.exchange("github.example.com").inject(h, "/"))
                    .isInstanceOfSatisfying(Refused.class, f -> {
                        assertThat(f.reason()).isEqualTo(SecretReasons.UNKNOWN_PLACEHOLDER);
                        assertThat(f.secret()).isNull();
                        assertThat(f.secrets()).isEmpty();
                    });
            assertThat(store.exchange("anywhere.example.net").inject(h, "/"))
                    .isInstanceOfSatisfying(Refused.class, f -> assertThat(f.reason())
                            .isEqualTo(SecretReasons.UNKNOWN_PLACEHOLDER));
        }
        assertThat(store.exchange("github.example.com").inject(headers(), "/x?token=" + stale))
                .isEqualTo(new Refused(SecretReasons.UNKNOWN_PLACEHOLDER, null, "url"));
        // a current one beside it is still swapped; text that only starts like one is no placeholder
        HttpHeaders ok = headers("Authorization", "Bearer " + ghPh, "X-Note", Placeholders.PREFIX + "short",
                "X-Long", stale + "x");
        assertThat(store.exchange("github.example.com").inject(ok, "/")).isEqualTo(new Injected(List.of("GH")));
        // another host's real placeholder is the more serious refusal
        assertThat(store.exchange("github.example.com").inject(headers("X-A", stale, "X-B", npmPh), "/"))
                .isEqualTo(new Refused("secret_wrong_host", "NPM", "header X-B"));
    }

    @Test
    void base64PlaceholderInAnotherHeaderToAnotherHostIsWrongHost() {
        String b64 = Base64.getEncoder().encodeToString(("data:" + npmPh + ";").getBytes(StandardCharsets.US_ASCII));
        HttpHeaders h = headers("X-Debug", b64);
        assertThat(store.exchange("paste.example.net").inject(h, "/"))
                .isEqualTo(new Refused("secret_wrong_host", "NPM", "header X-Debug"));
    }

    @Test
    void realValueGoingToAnotherHostIsRefused() {
        HttpHeaders h = headers("X-Leak", Base64.getEncoder().encodeToString(("k=" + gh).getBytes(StandardCharsets.US_ASCII)));
        assertThat(store.exchange("paste.example.net").inject(h, "/"))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "header X-Leak (real value)"));
        assertThat(store.exchange("paste.example.net").inject(headers(), "/?k=" + URLEncoder.encode(api, StandardCharsets.UTF_8)))
                .isEqualTo(new Refused("secret_wrong_host", "API", "url (real value)"));
        // to its own host, a real value is let through unchanged (the user's own tool may hold it)
        HttpHeaders own = headers("Authorization", "Bearer " + gh);
        assertThat(store.exchange("github.example.com").inject(own, "/")).isEqualTo(new Injected(List.of()));
    }

    @Test
    void wrongHostWinsOverWrongPlace() {
        HttpHeaders h = headers("X-Other", npmPh, "Authorization", "Bearer " + ghPh);
        assertThat(store.exchange("registry.example.com").inject(h, "/"))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "header Authorization"));
    }

    @Test
    void requireRefusesRequestsWithoutThePlaceholder() throws Exception {
        SecretStore s = Fixtures.store(Map.of("R", gh),
                spec("R", new SecretSource.Env("R"), List.of("api.example.com"), List.of("Authorization"), null, true, false));
        assertThat(s.exchange("api.example.com").inject(headers("Authorization", "Bearer mine"), "/"))
                .isEqualTo(new Refused("secret_required", "R", "request without its placeholder"));
        assertThat(s.exchange("api.example.com").inject(headers("Authorization", "Bearer " + s.placeholders().get("R")), "/"))
                .isEqualTo(new Injected(List.of("R")));
        assertThat(s.exchange("other.example.com").inject(headers(), "/")).isEqualTo(new Injected(List.of()));
    }

    @Test
    void duplicateHeadersKeepTheirOrder() {
        HttpHeaders h = headers("X-A", "1", "Authorization", "Bearer " + npmPh, "X-A", "2");
        store.exchange("registry.example.com").inject(h, "/");
        assertThat(h.getAll("X-A")).containsExactly("1", "2");
        assertThat(h.names()).startsWith("X-A", "Authorization");
    }

    @Test
    void nothingToDoLeavesHeadersAloneOnUnboundHosts() {
        HttpHeaders h = headers("Accept-Encoding", "gzip", "Authorization", "Bearer mine");
        assertThat(store.exchange("www.example.org").inject(h, "/")).isEqualTo(new Injected(List.of()));
        assertThat(h.get("Accept-Encoding")).isEqualTo("gzip");
    }

    @Test
    void boundHostGetsIdentityEncodingEvenWithoutInjection() {
        HttpHeaders h = headers("Accept-Encoding", "gzip, br", "TE", "trailers, deflate",
                "Sec-WebSocket-Extensions", "permessage-deflate");
        store.exchange("registry.example.com").inject(h, "/");
        assertThat(h.get("Accept-Encoding")).isEqualTo("identity");
        assertThat(h.contains("Sec-WebSocket-Extensions")).isFalse();
        assertThat(h.get("TE")).isEqualTo("trailers");
    }

    @Test
    void httpRequestOverloadUsesUriAndHeaders() {
        DefaultHttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/?q=" + ghPh);
        assertThat(refusing.exchange("github.example.com").inject(req))
                .isEqualTo(new Refused("secret_wrong_place", "GH", "url"));
        DefaultHttpRequest method = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(ghPh.toUpperCase(Locale.ROOT)), "/");
        method.headers().add("Authorization", "Bearer " + ghPh);
        assertThat(store.exchange("github.example.com").inject(method)).isEqualTo(new Injected(List.of("GH")));
        DefaultHttpRequest exact = new DefaultHttpRequest(HttpVersion.HTTP_1_1, new HttpMethod(ghPh), "/");
        assertThat(store.exchange("evil.example.net").inject(exact))
                .isEqualTo(new Refused("secret_wrong_host", "GH", "url"));
    }

    @Test
    void emptyStoreDoesNothing() {
        HttpHeaders h = headers("Authorization", "Bearer " + ghPh);
        assertThat(SecretStore.empty().exchange("x.example.com").inject(h, "/")).isEqualTo(new Injected(List.of()));
        assertThat(h.get("Authorization")).isEqualTo("Bearer " + ghPh);
    }
}
