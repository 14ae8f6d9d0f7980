package dev.sallyport.proxy.testing;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import dev.sallyport.testing.upstream.LenientUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A proxy in front of two {@link LenientUpstream}s for {@code up.test}: one plain HTTP, one HTTPS (certificate from
 * a per-run {@link TestPki}), both answered by one responder, so an attack test runs the same bytes through
 * absolute-form HTTP and through a CONNECT tunnel with TLS inside ({@link Way}). The policy is the caller's rules
 * (a {@code PORTS} placeholder stands for both upstream ports) and optional {@code secrets:} section.
 */
public final class LenientBench implements AutoCloseable {

    /** How a client reaches {@code up.test}. */
    public enum Way { PLAIN, TUNNEL }

    public final LenientUpstream plain;
    public final LenientUpstream tls;
    public final SallyportProxy proxy;
    public final RecordingListener events = new RecordingListener();
    public final Trust trust;
    public final Path dir;

    public LenientBench(LenientUpstream.Responder responder, String rules) throws Exception {
        this(responder, rules, "", Map.of());
    }

    /**
     * @param rules   the {@code rules:} body; {@code PORTS} is replaced by both upstream ports
     * @param secrets a {@code secrets:} section, or empty; each key of {@code values} in it is replaced by the path
     *                of a file holding that key's value (for {@code from: file:KEY})
     */
    public LenientBench(LenientUpstream.Responder responder, String rules, String secrets, Map<String, String> values)
            throws Exception {
        dir = ProxyFixture.tempDir();
        for (Map.Entry<String, String> v : values.entrySet()) {
            Path file = Files.writeString(dir.resolve(v.getKey().toLowerCase(java.util.Locale.ROOT)), v.getValue() + "\n");
            secrets = secrets.replace(v.getKey(), file.toString());
        }
        TestPki pki = TestPki.create();
        TestPki.Issued cert = pki.issue("up.test");
        plain = LenientUpstream.http(responder);
        tls = LenientUpstream.https(cert.key(), cert.chain(), responder);
        String yaml = ProxyFixture.policy(pki.rootPem(dir), "127.0.0.1/32:" + plain.port() + ", 127.0.0.1/32:"
                        + tls.port(), "", rules.replace("PORTS", plain.port() + ", " + tls.port()))
                .replace("AUDIT_PATH", dir.resolve("audit.jsonl").toString()) + secrets;
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Attack Test CA");
        Path caPem = dir.resolve("proxy-ca.pem");
        Files.write(caPem, CaExport.pem(ca, false));
        trust = Trust.of(caPem);
        proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "attack-test.yaml")).withCa(ca)
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withListener(events).withResolver(new MapResolver().map("up.test", "127.0.0.1"))
                .withPlaceholders(Placeholders.ephemeral()));
    }

    public RawConnection open(Way way) {
        return way == Way.PLAIN ? RawConnection.plain(proxy.address())
                : RawConnection.tunnel(proxy.address(), "up.test", tls.port(), trust.context);
    }

    /** The request target for {@code path}: absolute-form for plain, origin-form in a tunnel. */
    public String target(Way way, String path) {
        return way == Way.PLAIN ? "http://" + host(way) + path : path;
    }

    /** The Host header value. */
    public String host(Way way) {
        return "up.test:" + upstream(way).port();
    }

    public LenientUpstream upstream(Way way) {
        return way == Way.PLAIN ? plain : tls;
    }

    /** A bodiless request with only a Host header. */
    public String request(Way way, String method, String path) {
        return method + " " + target(way, path) + " HTTP/1.1\r\nHost: " + host(way) + "\r\n\r\n";
    }

    /** Enough clients, opened one after another, for one of them to share a given client's event loop. */
    public static int clientsToCoverEveryLoop() {
        return 2 * Runtime.getRuntime().availableProcessors() + 2;
    }

    /** The first request {@code upstream} parsed whose target is {@code path}. */
    public static LenientUpstream.Received find(LenientUpstream upstream, String path) {
        List<LenientUpstream.Received> all = upstream.received();
        return all.stream().filter(r -> r.requestLine().contains(path + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("the upstream never saw " + path + "; it saw " + all.stream()
                        .map(LenientUpstream.Received::requestLine).toList()));
    }

    @Override
    public void close() {
        proxy.close();
        plain.close();
        tls.close();
    }
}
