package dev.sallyport.benchmarks.peers;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.ssl.SslHandler;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * Direct: TLS, response decoder, {@link ResponseHandler}. Through a proxy: {@link TunnelHandler} first, which
 * installs the same three once the proxy answers CONNECT with 200.
 */
final class ClientInitializer extends ChannelInitializer<SocketChannel> {

    private final Run run;
    private final Slot slot;
    private final String host;

    ClientInitializer(Run run, Slot slot, String host) {
        this.run = run;
        this.slot = slot;
        this.host = host;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ChannelPipeline p = ch.pipeline();
        if (run.options().proxy() != null) {
            p.addLast("tunnel", new TunnelHandler(this, host, run.options().port(), slot));
        } else {
            addTls(p, null);
        }
        p.addLast("response", new ResponseHandler(slot));
    }

    /**
     * Adds TLS and the HTTP decoder after {@code after} (or first). No peer host/port is given to the engine, so
     * the client session cache is not used: every connection does a full handshake. SNI is set explicitly.
     */
    void addTls(ChannelPipeline p, String after) {
        SSLEngine engine = run.sslContext().newEngine(p.channel().alloc());
        SSLParameters params = engine.getSSLParameters();
        params.setServerNames(List.of(new SNIHostName(host)));
        engine.setSSLParameters(params);
        SslHandler ssl = new SslHandler(engine);
        if (run.options().h2Streams() > 0) {     // HTTP/2: the codec goes in once the handshake is done (H2Streams)
            if (after == null) {
                p.addFirst("tls", ssl);
            } else {
                p.addAfter(after, "tls", ssl);
            }
            return;
        }
        HttpResponseDecoder decoder = new HttpResponseDecoder(new HttpDecoderConfig().setMaxChunkSize(1 << 20));
        if (after == null) {
            p.addFirst("http", decoder);
            p.addFirst("tls", ssl);
        } else {
            p.addAfter(after, "http", decoder);
            p.addAfter(after, "tls", ssl);
        }
    }
}
