package dev.sallyport.proxy.dns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.RecordingListener;
import dev.sallyport.testing.Await;
import java.io.ByteArrayOutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A flood of DNS questions, then silence: the audit's rate limit writes the burst, and the lookups it left out are
 * counted by a record of their own within about a second ({@code suppressed}, reason {@code dns_lookups_suppressed}),
 * not only with a next lookup that never comes. Every question is accounted for.
 */
class LookupFloodTest {

    private static final int QUESTIONS = 400;

    @Test
    void lookupsLeftOutByTheRateLimitAreCountedWithoutANextLookup() throws Exception {
        RecordingListener events = new RecordingListener();
        Path audit = Files.createTempDirectory("sallyport-dns-flood").resolve("audit.jsonl");
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse("""
                        audit: {path: %s}
                        rules:
                          - {name: allowed, hosts: [allowed.test]}
                        """.formatted(audit), "flood.yaml")).withCa(CertificateAuthority.ephemeral("Flood Test CA"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(new MapResolver()).withListener(events).withDns(new HostPort("127.0.0.1", 0)));
             DatagramSocket socket = new DatagramSocket()) {
            InetSocketAddress dns = proxy.dnsAddress().orElseThrow();
            socket.setSoTimeout(5_000);
            byte[] answer = new byte[512];
            for (int i = 0; i < QUESTIONS; i++) {      // one at a time: no datagram is lost on the way
                byte[] query = query(i, "n" + i + ".denied.test");
                socket.send(new DatagramPacket(query, query.length, dns));
                socket.receive(new DatagramPacket(answer, answer.length));
            }
            Await.until("every question recorded or counted", Duration.ofSeconds(15), () -> {
                List<ProxyEvent.DnsAnswered> records = events.events.stream()
                        .filter(e -> e instanceof ProxyEvent.DnsAnswered).map(ProxyEvent.DnsAnswered.class::cast)
                        .toList();
                long named = records.stream().filter(r -> r.name() != null).count();
                long counted = records.stream().mapToLong(r -> r.suppressed() == null ? 0 : r.suppressed()).sum();
                return named + counted == QUESTIONS;
            });
            List<ProxyEvent.DnsAnswered> counts = events.events.stream()
                    .filter(e -> e instanceof ProxyEvent.DnsAnswered d && d.name() == null)
                    .map(ProxyEvent.DnsAnswered.class::cast).toList();
            assertThat(counts).as("the left-out lookups, counted by the timer").isNotEmpty()
                    .allSatisfy(c -> assertThat(c.reason()).isEqualTo(LookupAudit.SUPPRESSED));
        } finally {
            Files.deleteIfExists(audit);
            Files.deleteIfExists(audit.getParent());
        }
    }

    /** One A question for {@code name}, id {@code id}, recursion desired. */
    private static byte[] query(int id, String name) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {(byte) (id >> 8), (byte) id, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0});
        for (String label : name.split("\\.")) {
            out.write(label.length());
            out.writeBytes(label.getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes(new byte[] {0, 0, 1, 0, 1});
        return out.toByteArray();
    }
}
