package dev.sallyport.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.testing.TestPki;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.api.Test;

/**
 * What a remembered chain stands for. The full check here is a stand-in that accepts a fixed set of hosts and
 * counts its calls, so the tests see exactly when the remembering skips it; the JDK's own check is exercised
 * through the proxy in {@code RememberedChainTest}.
 */
class RememberingTrustManagerTest {

    static final List<String> NAMES = List.of("*.example.com", "api.example.org", "*.com", "a*.example.net");

    /** Accepts the hosts it is given, refuses every other, counts every call. */
    static final class FullCheck extends X509ExtendedTrustManager {
        final Set<String> accepts;
        int calls;

        FullCheck(String... accepts) {
            this.accepts = Set.of(accepts);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            calls++;
            if (engine == null || !accepts.contains(engine.getPeerHost())) {
                throw new CertificateException("refused");
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    final Instant start = Instant.now();
    final AtomicReference<Instant> wall = new AtomicReference<>(start);
    final AtomicLong nanos = new AtomicLong();
    final X509Certificate[] chain = TestPki.create()
            .issue(start.minus(Duration.ofHours(1)), start.plus(Duration.ofHours(1)), "*.example.com",
                    "named.example.org").chain();

    RememberingTrustManager remembering(FullCheck full) {
        InstantSource clock = wall::get;
        return new RememberingTrustManager(full, clock, nanos::get);
    }

    static SSLEngine engine(String host) throws Exception {
        return SSLContext.getDefault().createSSLEngine(host, 443);
    }

    @Test
    void aChainTheFullCheckAcceptedIsTakenForTheNamesItWasCheckedFor() throws Exception {
        FullCheck full = new FullCheck("a.example.com", "b.example.com", "named.example.org");
        RememberingTrustManager tm = remembering(full);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("b.example.com"));
        assertThat(full.calls).as("the wildcard was checked once, for a.example.com").isEqualTo(1);

        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("named.example.org"));
        assertThat(full.calls).as("an exact name is taken only once the full check accepted it").isEqualTo(2);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("named.example.org"));
        assertThat(full.calls).isEqualTo(2);
    }

    @Test
    void aHostTheChainDoesNotNameAlwaysGoesToTheFullCheck() throws Exception {
        FullCheck full = new FullCheck("a.example.com");
        RememberingTrustManager tm = remembering(full);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        for (String host : List.of("evil.org", "x.a.example.com", "example.com", "A.EXAMPLE.COM", "a.example.com.",
                "127.0.0.1")) {
            int before = full.calls;
            assertThatThrownBy(() -> tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine(host))).as(host)
                    .isInstanceOf(CertificateException.class);
            assertThat(full.calls).as(host).isEqualTo(before + 1);
        }
        assertThatThrownBy(() -> tm.checkServerTrusted(chain, "ECDHE_ECDSA", (SSLEngine) null))
                .isInstanceOf(CertificateException.class);
    }

    @Test
    void aRememberedChainIsCheckedAgainAfterTenMinutesOrOnceItExpires() throws Exception {
        FullCheck full = new FullCheck("a.example.com");
        RememberingTrustManager tm = remembering(full);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        nanos.addAndGet(RememberingTrustManager.REMEMBER.toNanos() - 1);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        assertThat(full.calls).isEqualTo(1);
        nanos.addAndGet(1);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        assertThat(full.calls).as("after ten minutes").isEqualTo(2);

        wall.set(start.plus(Duration.ofHours(1)));   // the leaf's notAfter, well inside the ten minutes
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        assertThat(full.calls).as("at the end of the chain's validity").isEqualTo(3);
    }

    @Test
    void anotherKeyExchangeTypeIsAnotherChain() throws Exception {
        FullCheck full = new FullCheck("a.example.com");
        RememberingTrustManager tm = remembering(full);
        tm.checkServerTrusted(chain, "ECDHE_ECDSA", engine("a.example.com"));
        tm.checkServerTrusted(chain, "ECDHE_RSA", engine("a.example.com"));
        assertThat(full.calls).isEqualTo(2);
    }

    @Test
    void exactNamesAndOneLabelWildcardsMatchPlainLowerCaseHostsOnly() {
        assertThat(RememberingTrustManager.match("api.example.org", NAMES)).isEqualTo("api.example.org");
        assertThat(RememberingTrustManager.match("API.Example.ORG", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("api.example.org.", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("example.org", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("x.api.example.org", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("a.example.com", NAMES)).isEqualTo("*.example.com");
        assertThat(RememberingTrustManager.match("example.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("a.b.example.com", NAMES)).isNull();
        assertThat(RememberingTrustManager.match("evil.com", NAMES)).as("a wildcard over one label").isNull();
        assertThat(RememberingTrustManager.match("ab.example.net", NAMES)).as("a wildcard inside a label").isNull();
        assertThat(RememberingTrustManager.match("127.0.0.1", List.of("127.0.0.1", "*.0.0.1"))).isNull();
        assertThat(RememberingTrustManager.match("a_b.example.com", NAMES)).isNull();
    }
}
