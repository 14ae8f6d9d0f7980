package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.Await;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Regression (issue 14 item 6): every exchange has exactly one {@code request} record with a {@code status}, its
 * outcome, which is what {@code sallyport audit summary} counts. An exchange whose client left while its dial was
 * still resolving wrote its outcome at once and its admitted decision afterwards, that one with the outcome's status
 * too: two records that looked like two exchanges. Now both are written once the dial resolved, in order (the
 * decision without a status, with the dialed address or the dial's denial; then the outcome), and nothing is sent.
 */
class OutcomeRecordTest {

    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static final CompletableFuture<Void> LOCAL_OPEN = new CompletableFuture<>();
    static final CompletableFuture<Void> METADATA_OPEN = new CompletableFuture<>();

    @BeforeAll
    static void start() throws Exception {
        upstream = EchoUpstream.http();
        int port = upstream.port();
        proxy = ProxyFixture.start(ProxyFixture.policy(null, "127.0.0.1/32:" + port, "",
                        "  - name: held\n    hosts: [local.test, metadata.test]\n    ports: [" + port + "]\n"),
                new MapResolver().gate("local.test", LOCAL_OPEN, "127.0.0.1")
                        .gate("metadata.test", METADATA_OPEN, "169.254.169.254"), ProxyFixture.tempDir());
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @CsvSource({"local.test, allow, client_closed, 127.0.0.1", "metadata.test, deny, private_address, 169.254.169.254"})
    void aClientThatLeavesWhileItsDialResolvesLeavesOneOutcomeRecord(String host, String decision, String reason,
                                                                     String ip) throws Exception {
        long closedBefore = closed();
        int before = upstream.requests.size();
        int lookups = proxy.resolver.calls.get();
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            OutputStream out = s.getOutputStream();
            String target = host + ":" + upstream.port();
            out.write(("GET http://" + target + "/left HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Await.until("the proxy asked for " + host, Duration.ofSeconds(10), () -> proxy.resolver.calls.get() > lookups);
        }
        Await.until("the proxy saw the client leave", Duration.ofSeconds(10), () -> closed() > closedBefore);
        (host.equals("local.test") ? LOCAL_OPEN : METADATA_OPEN).complete(null);

        AuditFields outcome = proxy.events.await("exchange", f -> host.equals(f.host()));
        assertThat(outcome.status()).isEqualTo(499);
        assertThat(outcome.decision()).isEqualTo(decision);
        assertThat(outcome.ip()).isEqualTo(ip);
        List<AuditFields> records = proxy.events.events.stream()
                .map(e -> switch (e) {
                    case ProxyEvent.Decided d when d.event().equals("request") -> d.fields();
                    case ProxyEvent.ExchangeCompleted c -> c.fields();
                    default -> null;
                })
                .filter(f -> f != null && outcome.id().equals(f.id())).toList();
        assertThat(records).as("the decision, then the outcome").hasSize(2);
        assertThat(records.getFirst().status()).as("the decision has no status").isNull();
        assertThat(records.getFirst().reason()).isEqualTo(reason);
        assertThat(records.getLast()).isEqualTo(outcome);
        assertThat(records.stream().filter(f -> f.status() != null)).as("one record with a status").hasSize(1);
        assertThat(upstream.requests).as("nothing was sent").hasSize(before);
    }

    static long closed() {
        return proxy.events.events.stream().filter(e -> e instanceof ProxyEvent.ConnectionClosed).count();
    }
}
