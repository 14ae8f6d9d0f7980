package dev.sallyport.proxy.exchange;

import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.internal.TunnelTarget;
import dev.sallyport.proxy.inject.UpstreamLeg;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Objects;

/**
 * One request as a front end hands it to the {@link ExchangeCore}, in no protocol's terms: what it asks for, where
 * it goes, and who sent it. The core decides, dials, injects, relays, scrubs and records from this alone, so a new
 * front end (HTTP/2, a transparent listener) gets every stage by building one of these.
 *
 * @param method     the request method, as received
 * @param target     where the request goes (normalized host and port): the absolute URL's authority, or the CONNECT
 *                   target of the tunnel it came through; never a Host header taken on trust
 * @param originForm path and query as received: what the policy decides on (normalized) and what goes upstream
 * @param headers    the header fields as received, {@code Host} included (an HTTP/2 front end turns
 *                   {@code :authority} into it): the core checks that it names {@code target}, refuses a
 *                   {@code Connection} field that names the framing or {@code Host}, removes hop-by-hop fields and
 *                   sets the framing itself
 * @param body       how the body is delimited
 * @param leg        how the request goes upstream: TLS (from a tunnel) or cleartext (absolute-form {@code http://})
 * @param upgrade    the protocol the request asks to switch to
 * @param origin     who sent it and through what, for the audit record
 */
public record ExchangeRequest(String method, Authority target, String originForm, HttpHeaders headers, BodyShape body,
                              UpstreamLeg leg, Upgrade upgrade, Origin origin) {

    public ExchangeRequest {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(originForm, "originForm");
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(leg, "leg");
        Objects.requireNonNull(upgrade, "upgrade");
        Objects.requireNonNull(origin, "origin");
    }

    /** How a request body is delimited. */
    public sealed interface BodyShape {
        /** No body, and no length said. */
        static BodyShape none() {
            return None.INSTANCE;
        }

        /** A body of unknown length (chunked on HTTP/1.1, DATA frames on HTTP/2). */
        static BodyShape stream() {
            return Stream.INSTANCE;
        }

        /** The shape an HTTP/1.1-style message declares: chunked, a Content-Length, or none. */
        static BodyShape of(io.netty.handler.codec.http.HttpMessage message) {
            if (io.netty.handler.codec.http.HttpUtil.isTransferEncodingChunked(message)) {
                return stream();
            }
            long length = io.netty.handler.codec.http.HttpUtil.getContentLength(message, -1L);
            return length < 0 ? none() : new Length(length);
        }

        /** True when no body byte follows the head. */
        default boolean empty() {
            return this instanceof None || (this instanceof Length l && l.bytes() == 0);
        }

        /** No body, and no length said (a GET). */
        record None() implements BodyShape {
            static final None INSTANCE = new None();
        }

        /** Exactly {@code bytes} bytes. */
        record Length(long bytes) implements BodyShape {
            public Length {
                if (bytes < 0) {
                    throw new IllegalArgumentException("bytes: " + bytes + " (expected: >= 0)");
                }
            }
        }

        /** Until the last part. */
        record Stream() implements BodyShape {
            static final Stream INSTANCE = new Stream();
        }
    }

    /** The protocol a request asks to switch to. */
    public enum Upgrade { NONE, WEBSOCKET }

    /**
     * Who sent the request and how it arrived: the client address (ip:port) and, for a request inside an
     * intercepted tunnel, the server name its TLS handshake sent (null for none, and for absolute-form requests).
     *
     * @param tls      {@code intercepted} inside a tunnel, {@code none} for plain HTTP (the audit record's {@code tls})
     * @param protocol the client's protocol: {@code http/1.1} (HTTP/1.0 too) or {@code h2}
     * @param arrival  how the client's connection arrived: {@code explicit} (it asked the proxy) or
     *                 {@code transparent} (captured: {@link dev.sallyport.proxy.internal.TunnelTarget#arrival})
     * @param identity the sandbox the connection belongs to ({@code anonymous} when it presented none)
     */
    public record Origin(String client, String tls, String sni, String protocol, String arrival,
                         ClientIdentity identity) {
        public Origin {
            Objects.requireNonNull(client, "client");
            Objects.requireNonNull(tls, "tls");
            Objects.requireNonNull(protocol, "protocol");
            Objects.requireNonNull(arrival, "arrival");
            Objects.requireNonNull(identity, "identity");
        }

        /** An anonymous client's. */
        public Origin(String client, String tls, String sni, String protocol, String arrival) {
            this(client, tls, sni, protocol, arrival, ClientIdentity.ANONYMOUS);
        }

        /** A client that asked the proxy. */
        public Origin(String client, String tls, String sni, String protocol) {
            this(client, tls, sni, protocol, TunnelTarget.EXPLICIT);
        }

        /** An HTTP/1.1 client's. */
        public Origin(String client, String tls, String sni) {
            this(client, tls, sni, "http/1.1");
        }
    }
}
