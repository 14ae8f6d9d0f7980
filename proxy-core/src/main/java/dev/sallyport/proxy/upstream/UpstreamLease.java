package dev.sallyport.proxy.upstream;

import dev.sallyport.policy.IpAddress;
import io.netty.channel.Channel;

/** A connected upstream channel (HTTP codec installed for HTTP leases) and the address it dialed. */
public record UpstreamLease(Channel channel, IpAddress address, Destination destination, boolean reused) {

    /** The dialed address as the audit record writes it. */
    public String ip() {
        return address.toString();
    }
}
