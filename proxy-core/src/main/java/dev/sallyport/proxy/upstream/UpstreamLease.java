package dev.sallyport.proxy.upstream;

import io.netty.channel.Channel;

/** A connected upstream channel (HTTP codec installed for HTTP leases) and the address it dialed. */
public record UpstreamLease(Channel channel, String ip, Destination destination, boolean reused) {}
