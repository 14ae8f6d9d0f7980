package dev.sallyport.proxy.testing;

import dev.sallyport.testing.HttpReads;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * One client connection to the proxy that sends exact bytes and reads responses one at a time (by their framing),
 * for keep-alive and pipelining attacks: plain (absolute-form requests), or a CONNECT tunnel with TLS inside.
 */
public final class RawConnection implements AutoCloseable {

    /** One response as the client read it. */
    public record Response(int status, String head, String body, List<String> trailers) {

        /** The first value of header {@code name} (case-insensitive), or null. */
        public String header(String name) {
            return HttpReads.header(head, name);
        }
    }

    private final Socket socket;
    private final InputStream in;

    private RawConnection(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(5000);
        this.in = socket.getInputStream();
    }

    /** A plain connection to the proxy. */
    public static RawConnection plain(InetSocketAddress proxy) {
        try {
            Socket s = new Socket();
            s.connect(proxy, 5000);
            return new RawConnection(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A CONNECT tunnel to {@code host:port} with TLS inside (SNI {@code host}), trusting {@code trust}. */
    public static RawConnection tunnel(InetSocketAddress proxy, String host, int port, SSLContext trust) {
        try {
            return new RawConnection(tunnelSocket(proxy, host, port, trust, List.of(), 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The TLS socket of a CONNECT tunnel to {@code host:port} (SNI {@code host}, the name checked), offering
     * {@code alpn} (none when empty), with a receive buffer of {@code receiveBuffer} bytes (0: the default).
     */
    static SSLSocket tunnelSocket(InetSocketAddress proxy, String host, int port, SSLContext trust, List<String> alpn,
                                  int receiveBuffer) {
        try {
            Socket s = new Socket();
            if (receiveBuffer > 0) {
                s.setReceiveBufferSize(receiveBuffer);
            }
            s.connect(proxy, 5000);
            s.setSoTimeout(5000);
            String target = host + ":" + port;
            s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String head = HttpReads.readHead(s.getInputStream());
            if (head == null || !head.startsWith("HTTP/1.1 200")) {
                s.close();
                throw new IllegalStateException("CONNECT " + target + " refused: " + head);
            }
            SSLSocket tls = (SSLSocket) trust.getSocketFactory().createSocket(s, host, port, true);
            SSLParameters params = tls.getSSLParameters();
            params.setServerNames(List.of(new SNIHostName(host)));
            params.setEndpointIdentificationAlgorithm("HTTPS");
            if (!alpn.isEmpty()) {
                params.setApplicationProtocols(alpn.toArray(String[]::new));
            }
            tls.setSSLParameters(params);
            tls.startHandshake();
            return tls;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public RawConnection send(String raw) {
        try {
            socket.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next response (framed by Content-Length or chunked), or null when the proxy closed or timed out first. */
    public Response read() {
        return read(false);
    }

    /** The next response to a HEAD request: never a body, whatever its framing headers say. */
    public Response readHeadResponse() {
        return read(true);
    }

    private Response read(boolean bodiless) {
        try {
            String head = HttpReads.readHead(in);
            if (head == null) {
                return null;
            }
            int status = Integer.parseInt(head.substring(9, 12));
            Response bare = new Response(status, head, "", List.of());
            List<String> trailers = new java.util.ArrayList<>();
            String length = bare.header("content-length");
            String te = bare.header("transfer-encoding");
            byte[] body;
            if (bodiless || status == 204 || status == 304 || status < 200) {
                body = new byte[0];
            } else if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
                body = HttpReads.readChunked(in, trailers);
            } else if (length != null) {
                body = in.readNBytes(Integer.parseInt(length));
            } else {
                body = in.readAllBytes();
            }
            return new Response(status, head, new String(body, StandardCharsets.ISO_8859_1), List.copyOf(trailers));
        } catch (SocketTimeoutException e) {
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Only the head of the next response (the body stays unread: a client that stops reading). */
    public String readResponseHead() {
        try {
            return HttpReads.readHead(in);
        } catch (IOException e) {
            return null;
        }
    }

    /** The connection's input, for a test that reads a body its own way. */
    public InputStream input() {
        return in;
    }

    /** Everything until the proxy closes (or a 5 s silence, marked {@code <timeout>}). */
    public String readAll() {
        try {
            return RawClient.readAll(in);
        } catch (IOException e) {
            return "<closed: " + e.getMessage() + ">";
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
