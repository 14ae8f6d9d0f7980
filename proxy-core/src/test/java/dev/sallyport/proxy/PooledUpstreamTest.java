package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RecordingListener;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keep-alive requests reuse an idle upstream connection without a new lookup, but only while the address it
 * dialed still passes the policy in force: a reload that takes the address away closes the pooled connection
 * and the next request is refused without reaching the upstream.
 */
class PooledUpstreamTest {

    static EchoUpstream upstream;
    final Path dir = ProxyFixture.tempDir();

    @BeforeAll
    static void start() throws Exception {
        upstream = EchoUpstream.http();
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    String policy(boolean allowLoopback) {
        return "network:\n  deny: default\n  allow_private: [" + (allowLoopback ? "127.0.0.1/32:" + upstream.port() : "")
                + "]\nrules:\n  - name: pooled\n    hosts: [pooled.test]\n    ports: [" + upstream.port() + "]\n";
    }

    @Test
    void keepAliveReusesTheConnectionWithoutALookupUntilAReloadDeniesItsAddress() throws Exception {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, policy(true));
        MapResolver resolver = new MapResolver().map("pooled.test", "127.0.0.1");
        RecordingListener events = new RecordingListener();
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(file))
                .withCa(CertificateAuthority.ephemeral("pooled-test"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(resolver).withListener(events));
             Socket client = new Socket(proxy.address().getAddress(), proxy.address().getPort())) {
            client.setSoTimeout(10_000);
            int connectionsBefore = upstream.connections.get();
            int requestsBefore = upstream.requests.size();
            for (int i = 0; i < 3; i++) {
                assertThat(get(client, "/r" + i)).startsWith("HTTP/1.1 200").contains("GET /r" + i);
            }
            assertThat(upstream.requests).hasSize(requestsBefore + 3);
            assertThat(upstream.connections.get()).as("one upstream connection for three requests")
                    .isEqualTo(connectionsBefore + 1);
            assertThat(resolver.calls.get()).as("lookups: only for the first request").isEqualTo(1);

            Files.writeString(file, policy(false));
            assertThat(proxy.policies().reload().success()).isTrue();
            String refused = get(client, "/after-reload");
            assertThat(refused).startsWith("HTTP/1.1 403").contains("X-Sallyport-Reason: private_address");
            assertThat(upstream.requests).as("nothing reached the upstream after the reload")
                    .hasSize(requestsBefore + 3);
        }
    }

    /** One keep-alive request on {@code client}; returns the response head and body (content-length framed). */
    private static String get(Socket client, String path) throws Exception {
        OutputStream out = client.getOutputStream();
        out.write(("GET http://pooled.test:" + upstream.port() + path + " HTTP/1.1\r\nHost: pooled.test:"
                + upstream.port() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = client.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return head + new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
    }
}
