package dev.sallyport.proxy.testing;

import dev.sallyport.proxy.Resolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A resolver from a map of names to IP literals: never touches real DNS, counts every call. */
public final class MapResolver implements Resolver {

    private final Map<String, List<String>> names = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<?>> gates = new ConcurrentHashMap<>();
    public final AtomicInteger calls = new AtomicInteger();

    /** A name whose lookup never completes (a resolver that hangs). */
    public MapResolver hang(String name) {
        names.put(name, List.of("hang"));
        return this;
    }

    /** A name that resolves to ips once open completes (a lookup the test lets finish when it wants). */
    public MapResolver gate(String name, CompletableFuture<?> open, String... ips) {
        gates.put(name, open);
        return map(name, ips);
    }

    public MapResolver map(String name, String... ips) {
        names.put(name, List.of(ips));
        return this;
    }

    @Override
    public CompletableFuture<List<InetAddress>> resolve(String host) {
        calls.incrementAndGet();
        CompletableFuture<?> gate = gates.get(host);
        if (gate != null && !gate.isDone()) {
            return gate.thenCompose(open -> resolve(host));
        }
        List<String> ips = names.get(host);
        if (List.of("hang").equals(ips)) {
            return new CompletableFuture<>();
        }
        if (ips == null) {
            return CompletableFuture.failedFuture(new UnknownHostException(host + ": not in the test map"));
        }
        try {
            InetAddress[] out = new InetAddress[ips.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = InetAddress.ofLiteral(ips.get(i));
            }
            return CompletableFuture.completedFuture(List.of(out));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
