package dev.sallyport.sandbox.vm;

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

    /** For a proxy someone else already runs on the gateway address. */
    ProxyHook EXTERNAL = listen -> () -> { };
}
