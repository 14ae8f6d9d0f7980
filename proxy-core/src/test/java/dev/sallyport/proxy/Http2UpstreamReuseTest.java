package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Trust;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Streams of one HTTP/2 client share the upstream connections their exchanges leave behind: ten rounds of 20
 * concurrent streams need 20 upstream connections, not one per request (the pool once kept only 16 per destination
 * and loop, and every burst beyond that dialed and shook hands again).
 */
class Http2UpstreamReuseTest {
    @Test
    void concurrentStreamsReuseTheUpstreamConnectionsOfTheRoundBefore() throws Exception {
        try (Upstreams up = Upstreams.start("api.test")) {
            String rules = "  - name: api\n    hosts: [api.test]\n    ports: [" + up.tls.port() + "]\n";
            try (ProxyFixture proxy = ProxyFixture.start(ProxyFixture.policy(up.root, "api.test:" + up.tls.port(),
                    "  http2: true\n", rules), new MapResolver().map("api.test", "127.0.0.1"), up.dir)) {
                HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                        .proxy(ProxySelector.of(proxy.address())).sslContext(Trust.of(proxy.caPem).context).build();
                String base = "https://api.test:" + up.tls.port() + "/p/";
                client.send(HttpRequest.newBuilder(URI.create(base + "first")).build(), HttpResponse.BodyHandlers.ofString());
                for (int round = 0; round < 10; round++) {
                    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        all.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + round + "/" + i)).build(),
                                HttpResponse.BodyHandlers.ofString()));
                    }
                    for (var f : all) {
                        f.get();
                    }
                }
                client.close();
                assertThat(up.tls.requests).hasSize(201);
                assertThat(up.tls.connections.get()).as("upstream connections for 201 requests, 20 at a time")
                        .isLessThanOrEqualTo(21);
            }
        }
    }
}
