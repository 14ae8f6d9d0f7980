package dev.sallyport.proxy.upstream;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How the connector turns a host name into addresses (the launch API's {@code Resolver}, adapted). It decides
 * nothing: every address it gives is checked against {@code network.deny} before one is dialed.
 */
@FunctionalInterface
public interface HostLookup {

    CompletableFuture<List<InetAddress>> lookup(String host);
}
