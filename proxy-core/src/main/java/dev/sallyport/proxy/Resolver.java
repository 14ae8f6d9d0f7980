package dev.sallyport.proxy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Turns a host name into addresses. The proxy checks every address it gets against {@code network.deny} and
 * dials exactly one that passed, so a resolver never decides anything by itself. Tests inject a map.
 */
@FunctionalInterface
public interface Resolver {

    CompletableFuture<List<InetAddress>> resolve(String host);

    /** The operating system's resolver, called on {@code executor} (lookups block). */
    static Resolver system(Executor executor) {
        return host -> CompletableFuture.supplyAsync(() -> {
            try {
                return List.of(InetAddress.getAllByName(host));
            } catch (UnknownHostException e) {
                throw new IllegalStateException("cannot resolve " + host + ": no such host", e);
            }
        }, executor);
    }
}
