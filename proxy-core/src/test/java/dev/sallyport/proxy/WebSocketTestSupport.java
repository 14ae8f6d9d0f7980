package dev.sallyport.proxy;

import dev.sallyport.proxy.testing.TunnelClient;
import dev.sallyport.proxy.testing.WebSocketRig;
import java.io.IOException;
import javax.net.ssl.SSLSocket;

/** The raw WebSocket upgrade the tests in this package send through a {@link WebSocketRig} tunnel. */
final class WebSocketTestSupport {

    private WebSocketTestSupport() {}

    static String upgrade(SSLSocket s, WebSocketRig rig) throws IOException {
        return TunnelClient.upgrade(s, WebSocketRig.HOST, rig.port(), "/ws", "");
    }
}
