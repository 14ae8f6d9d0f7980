package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.LeakCheck;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import org.junit.jupiter.api.Test;

/** {@code mode: audit}: denied traffic goes through and is recorded as would_deny; network.deny still holds. */
class AuditModeTest {

    @Test
    void wouldDenyPassesAndIsRecordedButPrivateAddressesStayClosed() throws Exception {
        LeakCheck.install();
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
