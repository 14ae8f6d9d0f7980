package dev.sallyport.proxy.connect;

import dev.sallyport.proxy.internal.Transports;

/** How a transparent listener learns where each of its connections was headed. */
public enum OriginalDestination {
    /**
     * From a PROXY protocol v2 header the connection begins with, written by whoever captured it (the sandbox runner's
     * relay, which the workload cannot bypass): the listener must be reachable by that relay alone.
     */
    PROXY_HEADER,
    /**
     * From the kernel's connection tracking ({@code SO_ORIGINAL_DST}): connections the host's own nftables redirected
     * to the listener ({@code proxy.transparent}); nothing the client sends is believed.
     */
    CONNECTION_TRACKING;

    /** Whether this JVM can learn destinations this way (the kernel's needs native access and the epoll transport). */
    public boolean readable() {
        return this == PROXY_HEADER || (Transports.nativeTransport() && SocketDestination.available());
    }
}
