package dev.sallyport.policy;

import java.util.List;
import java.util.Objects;

/**
 * The {@code upstream.proxy} section: a parent HTTP proxy that every upstream connection goes through as an HTTP
 * {@code CONNECT} tunnel, except toward the {@code no_proxy} destinations, which are dialed directly. The policy
 * holds where the credentials are, never their value.
 *
 * @param address      the parent, {@code host:port} (port above 0)
 * @param credentials  nullable: where {@code user:password} for {@code Proxy-Authorization: Basic} is
 * @param noProxyHosts destinations dialed directly: exact names or IP literals, and {@code *.} patterns
 * @param noProxyNets  destinations dialed directly when the destination is an IP literal inside one of them
 */
public record UpstreamProxy(HostPort address, SecretSource credentials, List<HostPattern> noProxyHosts,
                            List<Cidr> noProxyNets) {

    public UpstreamProxy {
        Objects.requireNonNull(address, "address");
        if (address.port() == 0) {
            throw new IllegalArgumentException("upstream.proxy.address: port 0 (expected: the parent's port, 1..65535)");
        }
        noProxyHosts = List.copyOf(noProxyHosts);
        noProxyNets = List.copyOf(noProxyNets);
    }

    /**
     * True when a connection to {@code normalizedHost} goes directly, not through the parent. A name never matches a
     * network: Sallyport does not resolve names that go through the parent, so it cannot know their addresses.
     */
    public boolean direct(String normalizedHost) {
        for (HostPattern p : noProxyHosts) {
            if (p.matches(normalizedHost)) {
                return true;
            }
        }
        if (noProxyNets.isEmpty()) {
            return false;
        }
        return IpAddress.parseStrict(normalizedHost).map(ip -> noProxyNets.stream().anyMatch(n -> n.contains(ip)))
                .orElse(false);
    }
}
