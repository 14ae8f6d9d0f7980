package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.PolicyEngine;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

/**
 * Where the exchange core gets its upstream connections and gives them back: {@link UpstreamConnector} in the
 * proxy (resolve, check every address, dial exactly the one checked, pool), a stand-in in the core's own tests.
 */
public interface Dialer {

    /**
     * A connection to {@code dest} on {@code loop}, its address checked against {@code engine}'s
     * {@code network.deny}; fails with {@link UpstreamFailure}. {@code client} names the hop in errors.
     */
    Future<UpstreamLease> acquire(Destination dest, PolicyEngine engine, EventLoop loop, String client);

    /** Gives a connection back after its exchange; it is kept for another only when {@code reusable} and in step. */
    void release(UpstreamLease lease, boolean reusable);
}
