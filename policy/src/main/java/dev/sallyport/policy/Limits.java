package dev.sallyport.policy;

/**
 * {@code proxy.limits}: caps that keep one client from exhausting the proxy.
 *
 * @param maxConnections          open client connections (default 4096)
 * @param maxTunnels              open CONNECT tunnels (default 10000)
 * @param maxHeaderBytes          total request header size (default 32768)
 * @param maxInitialLineBytes     request line size (default 8192)
 * @param maxBodyBytes            request body size; 0 = no cap (default 0)
 * @param maxConnectionsPerClient open connections of one client: one IPv4 address or one IPv6 /64 (default 1024)
 * @param maxTunnelsPerClient     open CONNECT tunnels of one client (default 1024)
 * @param maxExchangesPerClient   requests of one client in progress at once, HTTP/1.1 and HTTP/2 streams together:
 *                                each holds an upstream connection (default 1024, as many as its connections could
 *                                carry over HTTP/1.1)
 */
public record Limits(int maxConnections, int maxTunnels, int maxHeaderBytes, int maxInitialLineBytes,
                     long maxBodyBytes, int maxConnectionsPerClient, int maxTunnelsPerClient,
                     int maxExchangesPerClient) {

    public static final int DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 1024;
    public static final int DEFAULT_MAX_TUNNELS_PER_CLIENT = 1024;
    public static final int DEFAULT_MAX_EXCHANGES_PER_CLIENT = 1024;

    public static final Limits DEFAULTS = new Limits(4096, 10_000, 32_768, 8192, 0);

    public Limits {
        positive("maxConnections", maxConnections);
        positive("maxTunnels", maxTunnels);
        positive("maxHeaderBytes", maxHeaderBytes);
        positive("maxInitialLineBytes", maxInitialLineBytes);
        if (maxBodyBytes < 0) {
            throw new IllegalArgumentException("maxBodyBytes: " + maxBodyBytes + " (expected: >= 0, 0 = no cap)");
        }
        positive("maxConnectionsPerClient", maxConnectionsPerClient);
        positive("maxTunnelsPerClient", maxTunnelsPerClient);
        positive("maxExchangesPerClient", maxExchangesPerClient);
    }

    /** The limits with the default per-client cap on exchanges. */
    public Limits(int maxConnections, int maxTunnels, int maxHeaderBytes, int maxInitialLineBytes, long maxBodyBytes,
                  int maxConnectionsPerClient, int maxTunnelsPerClient) {
        this(maxConnections, maxTunnels, maxHeaderBytes, maxInitialLineBytes, maxBodyBytes, maxConnectionsPerClient,
                maxTunnelsPerClient, DEFAULT_MAX_EXCHANGES_PER_CLIENT);
    }

    /** The limits with the default per-client caps. */
    public Limits(int maxConnections, int maxTunnels, int maxHeaderBytes, int maxInitialLineBytes, long maxBodyBytes) {
        this(maxConnections, maxTunnels, maxHeaderBytes, maxInitialLineBytes, maxBodyBytes,
                DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_MAX_TUNNELS_PER_CLIENT);
    }

    private static void positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }
}
