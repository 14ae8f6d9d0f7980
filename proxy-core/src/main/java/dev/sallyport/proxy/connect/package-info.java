/**
 * The client connection's first phases: the {@link dev.sallyport.proxy.connect.FrontendInitializer} (start here:
 * per-client and proxy connection limits, counters, idle timeout, HTTP phase) and the
 * {@link dev.sallyport.proxy.connect.ConnectHandler},
 * which decides a CONNECT on host and port before anything else, takes a tunnel slot (per client and proxy-wide)
 * and, once the audit log took the decision, turns the connection into a tunnel.
 */
package dev.sallyport.proxy.connect;
