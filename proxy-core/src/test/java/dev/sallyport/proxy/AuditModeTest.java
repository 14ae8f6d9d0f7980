package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.Prerequisites;
import org.junit.jupiter.api.Test;

/** {@code mode: audit}: denied traffic goes through and is recorded as would_deny; network.deny still holds. */
class AuditModeTest {

    @Test
    void whenTheAuditLogCannotWriteNewRequestsAreRefused() throws Exception {
        Prerequisites.require("/dev/full", java.nio.file.Files.isWritable(java.nio.file.Path.of("/dev/full")),
                "a device whose every write fails with ENOSPC");
        try (EchoUpstream upstream = EchoUpstream.http();
             ProxyFixture proxy = ProxyFixture.start(ProxyFixture.policy(null, "upstream.test:" + upstream.port(), "",
                     "  - name: u\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n")
                     .replace("AUDIT_PATH", "/dev/full"),
                     new MapResolver().map("upstream.test", "127.0.0.1"), ProxyFixture.tempDir())) {
            String target = "upstream.test:" + upstream.port();
            String request = "GET http://" + target + "/x HTTP/1.1\r\nHost: " + target + "\r\nConnection: close\r\n\r\n";
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            String response = "";
            for (int i = 0; i < 200 && System.nanoTime() < deadline && !response.contains("audit_unavailable"); i++) {
                response = RawClient.exchange(proxy.address(), request);
            }
            assertThat(response).startsWith("HTTP/1.1 503 ").contains("X-Sallyport-Reason: audit_unavailable");
        }
    }

    @Test
    void wouldDenyPassesAndIsRecordedButPrivateAddressesStayClosed() throws Exception {
        try (EchoUpstream upstream = EchoUpstream.http();
             ProxyFixture proxy = ProxyFixture.start("mode: audit\n" + ProxyFixture.policy(null,
                     "upstream.test:" + upstream.port(), "", "  []\n"),
                     new MapResolver().map("upstream.test", "127.0.0.1").map("inside.test", "10.0.0.7"),
                     ProxyFixture.tempDir())) {
            String target = "upstream.test:" + upstream.port();
            String ok = RawClient.exchange(proxy.address(), "GET http://" + target + "/a HTTP/1.1\r\nHost: " + target
                    + "\r\nConnection: close\r\n\r\n");
            assertThat(ok).startsWith("HTTP/1.1 200 ");
            AuditFields decided = proxy.events.await("request", f -> "/a".equals(f.path()));
            assertThat(decided.decision()).isEqualTo("would_deny");
            assertThat(decided.reason()).isEqualTo("no_matching_rule");
            String inside = "inside.test:" + upstream.port();
            String denied = RawClient.exchange(proxy.address(), "GET http://" + inside + "/ HTTP/1.1\r\nHost: "
                    + inside + "\r\n\r\n");
            assertThat(denied).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
        }
    }
}
