package dev.sallyport.policy;

/**
 * {@code proxy.limits}: caps that keep one client from exhausting the proxy.
 *
 * @param maxConnections      open client connections (default 4096)
 * @param maxTunnels          open CONNECT tunnels (default 10000)
 * @param maxHeaderBytes      total request header size (default 32768)
 * @param maxInitialLineBytes request line size (default 8192)
 * @param maxBodyBytes        request body size; 0 = no cap (default 0)
 */
public record Limits(int maxConnections, int maxTunnels, int maxHeaderBytes, int maxInitialLineBytes,
                     long maxBodyBytes) {

    public static final Limits DEFAULTS = new Limits(4096, 10_000, 32_768, 8192, 0);

    public Limits {
        positive("maxConnections", maxConnections);
        positive("maxTunnels", maxTunnels);
        positive("maxHeaderBytes", maxHeaderBytes);
        positive("maxInitialLineBytes", maxInitialLineBytes);
        if (maxBodyBytes < 0) {
            throw new IllegalArgumentException("maxBodyBytes: " + maxBodyBytes + " (expected: >= 0, 0 = no cap)");
        }
    }

    private static void positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }
}
