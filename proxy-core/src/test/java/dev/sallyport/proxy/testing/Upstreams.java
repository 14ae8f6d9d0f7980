package dev.sallyport.proxy.testing;

import dev.sallyport.testing.TestPki;
import java.nio.file.Path;

/**
 * A plain HTTP and an HTTPS {@link EchoUpstream} on loopback, the HTTPS one with a certificate for
 * {@code names} from a fresh {@link TestPki} whose root ({@link #root}) the proxy's policy should trust.
 */
public final class Upstreams implements AutoCloseable {

    public final Path dir = ProxyFixture.tempDir();
    public final Path root;
    public final EchoUpstream plain;
    public final EchoUpstream tls;

    private Upstreams(String... names) throws Exception {
        TestPki pki = TestPki.create();
        root = pki.rootPem(dir);
        plain = EchoUpstream.http();
        tls = EchoUpstream.https(pki.issue(names));
    }

    public static Upstreams start(String... names) throws Exception {
        return new Upstreams(names);
    }

    /** Requests both upstreams have seen. */
    public int requests() {
        return plain.requests.size() + tls.requests.size();
    }

    @Override
    public void close() {
        plain.close();
        tls.close();
    }
}
