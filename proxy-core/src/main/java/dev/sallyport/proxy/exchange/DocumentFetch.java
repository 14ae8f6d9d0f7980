package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import dev.sallyport.proxy.registry.SimpleIndex;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The proxy's own request for a package document, made when a file is asked for whose verdict needs it and none
 * is remembered: a GET through the {@link ExchangeCore} like any other (decided, dialed, audited as a request of
 * the same client), whose filtered answer leaves its verdicts in {@link RegistryStage#VERDICTS}. This is its
 * {@link Downstream}: it drops the body and completes once the exchange is over, on the client's event loop.
 */
final class DocumentFetch implements Downstream {

    private final Channel channel;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private DocumentFetch(Channel channel) {
        this.channel = channel;
    }

    /** Fetches {@code packageName}'s document from {@code registry}'s first document host, on {@code original}'s port. */
    static CompletableFuture<Void> fetch(ExchangeCore core, ExchangeRequest original, Downstream client,
                                         Registry registry, String packageName) {
        DocumentFetch fetch = new DocumentFetch(client.channel());
        String host = registry.hosts().getFirst();
        int port = original.target().port();
        boolean npm = registry.ecosystem() == Ecosystem.NPM;
        HttpHeaders headers = new DefaultHttpHeaders();
        headers.set(HttpHeaderNames.HOST, port == 443 ? host : host + ":" + port);
        headers.set(HttpHeaderNames.ACCEPT, npm ? "application/json" : SimpleIndex.JSON_TYPE);
        String path = npm ? "/" + packageName.replace("/", "%2f") : "/simple/" + packageName + "/";
        ExchangeRequest request = new ExchangeRequest("GET", new Authority(host, port), path, headers,
                ExchangeRequest.BodyShape.none(), original.leg(), ExchangeRequest.Upgrade.NONE, original.origin());
        Exchange exchange = core.start(request, fetch);
        if (exchange != null && exchange.awaitingRequestBody()) {
            exchange.requestBody(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        return fetch.done;
    }

    @Override
    public Channel channel() {
        return channel;
    }

    @Override
    public ChannelFuture send(HttpObject part, boolean flush) {
        boolean last = part instanceof LastHttpContent;
        if (part instanceof HttpContent) {
            ReferenceCountUtil.release(part);
        }
        if (last) {
            done.complete(null);
        }
        return channel.newSucceededFuture();
    }

    @Override
    public void flush() {
        // nothing is written anywhere
    }

    @Override
    public void readRequestBody() {
        // the request has no body: its last part was handed over at the start
    }

    @Override
    public void refuse(int status, String reason, String detail, boolean keepOpen) {
        done.complete(null);
    }

    @Override
    public void abort() {
        done.complete(null);
    }

    @Override
    public void ended(boolean keepOpen) {
        done.complete(null);
    }

    @Override
    public Channel becomeRelay(List<ChannelHandler> inbound) {
        throw new IllegalStateException("a document fetch does not upgrade");
    }
}
