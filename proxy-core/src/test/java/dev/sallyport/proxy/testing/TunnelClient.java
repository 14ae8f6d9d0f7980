package dev.sallyport.proxy.testing;

import dev.sallyport.testing.Trust;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * A client that speaks raw bytes inside an intercepted tunnel: CONNECT, TLS to the proxy (trusting its CA, SNI
 * set), then whatever the test writes, such as a WebSocket upgrade followed by hand-made frames.
 */
public final class TunnelClient {

    private TunnelClient() {}

    /** CONNECT {@code host:port} through {@code proxy}, then TLS with SNI {@code host}; 10 s socket timeout. */
    public static SSLSocket open(InetSocketAddress proxy, String host, int port, Trust trust) throws IOException {
        Socket raw = new Socket();
        raw.connect(proxy, 5000);
        raw.setSoTimeout(10_000);
        String target = host + ":" + port;
        raw.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        String head = ScriptedUpstream.readHead(raw.getInputStream());
        if (!head.startsWith("HTTP/1.1 200")) {
            raw.close();
            throw new IOException("CONNECT refused: " + head.lines().findFirst().orElse(""));
        }
        SSLSocket tls = (SSLSocket) trust.context.getSocketFactory().createSocket(raw, host, port, true);
        SSLParameters params = tls.getSSLParameters();
        params.setServerNames(List.of(new SNIHostName(host)));
        tls.setSSLParameters(params);
        tls.startHandshake();
        return tls;
    }

    /** Sends a WebSocket upgrade for {@code path} (extra header lines CRLF-ended) and returns the response head. */
    public static String upgrade(SSLSocket s, String host, int port, String path, String extra) throws IOException {
        String key = Base64.getEncoder().encodeToString("sallyport-test-k".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                + key + "\r\n" + extra + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
        return ScriptedUpstream.readHead(s.getInputStream());
    }
}
