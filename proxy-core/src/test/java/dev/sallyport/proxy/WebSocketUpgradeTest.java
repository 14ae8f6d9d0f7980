package dev.sallyport.proxy;

import static dev.sallyport.proxy.testing.WebSocketRig.next;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.testing.LeakCheck;
import dev.sallyport.proxy.testing.WebSocketRig;
import dev.sallyport.proxy.testing.WsFrames;
import java.util.concurrent.BlockingQueue;
import okhttp3.WebSocket;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The switch from HTTP to the WebSocket relay: frames an upstream sends in the same write as its {@code 101} reach
 * the client (scrubbed, in order), and both directions read on afterwards.
 */
class WebSocketUpgradeTest {

    static {
        LeakCheck.install();
    }

    static final String VALUE = "ws-early-value-0123456789abcdef";

    @ParameterizedTest(name = "secrets configured: {0}")
    @ValueSource(booleans = {false})
    void framesInTheSameWriteAsThe101AreDeliveredInOrderAndBothSidesReadOn(boolean secrets) throws Exception {
        String block = secrets ? "secrets:\n" + WebSocketRig.secret("OTHER", VALUE, "elsewhere.test",
                "sallyport-ph-upgradetestplaceholder1") : "";
        try (WebSocketRig rig = WebSocketRig.start(block, c -> {
            c.writeAtOnce(WsFrames.switching(c, ""), WsFrames.text(true, WsFrames.TEXT, "first " + VALUE + " end"),
                    WsFrames.text(true, WsFrames.TEXT, "second"));
            WsFrames.Frame message = WsFrames.read(c.in());
            c.writeAtOnce(WsFrames.text(true, WsFrames.TEXT, "echo:" + message.text()));
            WsFrames.Frame close = WsFrames.read(c.in());
            c.writeAtOnce(WsFrames.close(close.closeCode(), null));
        })) {
            BlockingQueue<String> events = WebSocketRig.events();
            WebSocket ws = rig.open("/ws", events);
            assertThat(next(events)).isEqualTo("open");
            String first = next(events);
            if (secrets) {
                assertThat(first).startsWith("text:first ").endsWith(" end").doesNotContain(VALUE)
                        .contains("[sallyport:redacted]");
            } else {
                assertThat(first).isEqualTo("text:first " + VALUE + " end");
            }
            assertThat(next(events)).isEqualTo("text:second");
            ws.send("from-client");
            assertThat(next(events)).isEqualTo("text:echo:from-client");
            ws.close(1000, null);
            assertThat(next(events)).isEqualTo("closing:1000:");
            assertThat(next(events)).isEqualTo("closed:1000");
            rig.proxy.events.await("websocket_end", f -> true);
            assertThat(rig.upstream.failures).isEmpty();
        }
    }
}
