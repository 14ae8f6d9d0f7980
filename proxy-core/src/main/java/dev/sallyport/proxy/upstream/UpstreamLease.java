package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.IpAddress;
import io.netty.channel.Channel;

/**
 * A connected upstream channel and the address it dialed: for HTTP/1.1 the connection (HTTP codec installed for
 * HTTP leases), for HTTP/2 one stream of a pooled connection, whose pipeline speaks the same HTTP objects.
 *
 * @param protocol {@code http/1.1} or {@code h2}: what the exchange speaks to the upstream
 */
public record UpstreamLease(Channel channel, IpAddress address, Destination destination, boolean reused,
                            String protocol) {

    public static final String HTTP_1_1 = "http/1.1";
    public static final String H2 = "h2";

    /** An HTTP/1.1 (or raw) lease. */
    public UpstreamLease(Channel channel, IpAddress address, Destination destination, boolean reused) {
        this(channel, address, destination, reused, HTTP_1_1);
    }

    /** The dialed address as the audit record writes it. */
    public String ip() {
        return address.toString();
    }

    /** True for one stream of an HTTP/2 connection. */
    public boolean h2() {
        return H2.equals(protocol);
    }
}
