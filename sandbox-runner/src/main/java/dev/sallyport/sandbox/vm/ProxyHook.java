package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.SandboxNetwork;
import java.net.InetSocketAddress;

/**
 * Starts the proxy once the sandbox bridge exists (its gateway address cannot be bound earlier). A
 * {@code SandboxRun} passes one that starts its own {@code SallyportProxy} listening on the given address; the handle
 * it returns is closed after the workload ends.
 */
@FunctionalInterface
public interface ProxyHook {

    /** Starts the proxy listening on {@code listen} and returns what stops it. */
    AutoCloseable start(InetSocketAddress listen) throws Exception;

    /**
     * Starts the proxy for {@code network}: by default only its explicit listener ({@link #start(InetSocketAddress)});
     * a hook that also captures starts the transparent listener on {@link SandboxNetwork#transparentPort()} and the DNS
     * stub on {@link SandboxNetwork#dnsPort()} of the gateway, where the network's table DNATs the guest's traffic.
     */
    default AutoCloseable start(SandboxNetwork network) throws Exception {
        return start(new InetSocketAddress(network.gateway(), network.proxyPort()));
    }

    /**
     * The host table dropped packets from the sandbox's bridge whose source, {@code source}, is not the guest's address
     * (called once per source, from the run's table watch, which has printed a warning already): a hook whose proxy
     * audits it under the sandbox's identity reports it there. By default nothing more.
     */
    default void spoofed(String source) {
    }

    /** What {@code --dry-run} prints for this step. */
    default String plan(SandboxNetwork network) {
        return "start the proxy listening on " + network.gateway() + ":" + network.proxyPort();
    }

    /** For a proxy someone else already runs on the gateway address. */
    ProxyHook EXTERNAL = listen -> () -> { };
}
