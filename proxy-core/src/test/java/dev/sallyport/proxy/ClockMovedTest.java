package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.ca.KeyType;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.identity.SandboxRegistry;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Await;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Injected fault: the machine's clock moves (a day forward, then days back) under a running proxy. The clients
 * check certificates at the moved time, as a client on the same machine would: each jump keeps the tunnels
 * working (a cached leaf that is not valid at the new time is minted again, one that still is stays), the audit
 * records carry the moved time, and a sandbox's lease runs for its length whatever the clock says.
 */
class ClockMovedTest {

    private static final Pattern TS = Pattern.compile("\"ts\":\"([^\"]+)\"");

    /** The system clock moved by an offset the test sets. */
    static final class MovableClock implements InstantSource {
        private volatile Duration offset = Duration.ZERO;

        @Override
        public Instant instant() {
            return Instant.now().plus(offset);
        }

        void move(Duration by) {
            offset = offset.plus(by);
        }
    }

    @TempDir
    Path dir;

    @Test
    void tunnelsSurviveJumpsBothWaysAndTheAuditFollowsTheClock() throws Exception {
        MovableClock clock = new MovableClock();
        clock.move(Duration.ofDays(-10));
        CertificateAuthority ca = CertificateAuthority.init(dir.resolve("ca"), "Clock Test CA", KeyType.EC_P256, 30,
                clock);    // valid from ten days ago: the clock may go back
        clock.move(Duration.ofDays(10));
        try (Upstreams upstreams = Upstreams.start("clock.test")) {
            int port = upstreams.tls.port();
            Path audit = dir.resolve("audit.jsonl");
            String yaml = ProxyFixture.policy(upstreams.root, "clock.test:" + port, "",
                    "  - name: clock\n    hosts: [clock.test]\n    ports: [" + port + "]\n")
                    .replace("AUDIT_PATH", audit.toString());
            SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "clock.yaml"))
                    .withCa(ca).withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                    .withResolver(new MapResolver().map("clock.test", "127.0.0.1")).withClock(clock));
            X509Certificate first;
            X509Certificate ahead;
            X509Certificate behind;
            try {
                String base = "https://clock.test:" + port;
                first = leafOf(get(proxy, ca, clock, base + "/now"));
                recorded(audit, "/now");   // the exchange's record is stamped as it ends: before the clock moves

                clock.move(Duration.ofDays(1));
                ahead = leafOf(get(proxy, ca, clock, base + "/ahead"));
                recorded(audit, "/ahead");
                assertThat(ahead.getSerialNumber()).as("a leaf still valid a day later is not minted again")
                        .isEqualTo(first.getSerialNumber());

                clock.move(Duration.ofDays(-3));
                behind = leafOf(get(proxy, ca, clock, base + "/behind"));
                assertThat(behind.getSerialNumber()).as("a leaf not yet valid two days back is minted again")
                        .isNotEqualTo(first.getSerialNumber());
                assertThat(behind.getNotBefore().toInstant()).as("the new leaf's validity covers the moved clock")
                        .isBefore(clock.instant().minus(Duration.ofMinutes(30)));
            } finally {
                proxy.close();
            }
            Instant real = Instant.now();
            assertThat(stamp(audit, "/now")).isBetween(real.minus(Duration.ofMinutes(5)), real);
            assertThat(stamp(audit, "/ahead")).as("the audit follows the clock forward")
                    .isBetween(real.plus(Duration.ofDays(1)).minus(Duration.ofMinutes(5)), real.plus(Duration.ofDays(1)));
            assertThat(stamp(audit, "/behind")).as("and back")
                    .isBetween(real.minus(Duration.ofDays(2)).minus(Duration.ofMinutes(5)), real.minus(Duration.ofDays(2)));
        }
    }

    @Test
    void aLeaseRunsForItsLengthWhateverTheClockSays() throws Exception {
        MovableClock clock = new MovableClock();
        SandboxRegistry registry = new SandboxRegistry(clock);
        SandboxRegistry.Granted hour = registry.register("long-lease", "long-lease", List.of(), Duration.ofHours(1));
        SandboxRegistry.Granted second = registry.register("short-lease", "short-lease", List.of(),
                Duration.ofSeconds(1));
        clock.move(Duration.ofDays(2));
        assertThat(registry.resolve(hour.token())).as("an hour's lease two days of clock later").isPresent();
        clock.move(Duration.ofDays(-4));
        Await.until("a one-second lease ends after the clock went back two days", Duration.ofSeconds(10),
                () -> registry.resolve(second.token()).isEmpty());
        assertThat(registry.resolve(hour.token())).as("the hour's lease still runs").isPresent();
    }

    private static HttpResponse<String> get(SallyportProxy proxy, CertificateAuthority ca, InstantSource clock,
                                            String url) throws Exception {
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, new TrustManager[] {new TrustAt(ca.certificate(), clock)}, null);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .proxy(ProxySelector.of(proxy.address())).sslContext(tls).connectTimeout(Duration.ofSeconds(10))
                .build();
        try (client) {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(url).isEqualTo(200);
            return response;
        }
    }

    private static X509Certificate leafOf(HttpResponse<?> response) throws Exception {
        return (X509Certificate) response.sslSession().orElseThrow().getPeerCertificates()[0];
    }

    private static void recorded(Path audit, String path) {
        Await.until("the record of " + path, Duration.ofSeconds(10), () -> {
            try {
                return Files.exists(audit) && Files.readAllLines(audit).stream()
                        .anyMatch(l -> l.contains("\"path\":\"" + path + "\"") && l.contains("\"status\""));
            } catch (java.io.IOException e) {
                return false;
            }
        });
    }

    private static Instant stamp(Path audit, String path) throws Exception {
        String line = Files.readAllLines(audit).stream()
                .filter(l -> l.contains("\"path\":\"" + path + "\"") && l.contains("\"status\""))
                .findFirst().orElseThrow(() -> new AssertionError("no record for " + path));
        Matcher ts = TS.matcher(line);
        assertThat(ts.find()).as(line).isTrue();
        return Instant.parse(ts.group(1));
    }

    /** Trusts leaves of {@code ca} valid at {@code clock}'s time: a client whose clock moved with the machine's. */
    private record TrustAt(X509Certificate ca, InstantSource clock) implements X509TrustManager {
        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            try {
                PKIXParameters parameters = new PKIXParameters(Set.of(new TrustAnchor(ca, null)));
                parameters.setRevocationEnabled(false);
                parameters.setDate(Date.from(clock.instant()));
                CertPathValidator.getInstance("PKIX").validate(CertificateFactory.getInstance("X.509")
                        .generateCertPath(List.of(chain[0])), parameters);
            } catch (GeneralSecurityException e) {
                throw new CertificateException("at " + clock.instant() + ": " + e.getMessage(), e);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("not a server");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[] {ca};
        }
    }
}
