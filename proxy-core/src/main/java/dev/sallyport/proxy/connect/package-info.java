/**
 * The client connection's first phases: the {@link dev.sallyport.proxy.connect.FrontendInitializer} (start here:
 * connection limit, counters, idle timeout, HTTP phase) and the {@link dev.sallyport.proxy.connect.ConnectHandler},
 * which decides a CONNECT on host and port before anything else and turns the connection into a tunnel.
 */
package dev.sallyport.proxy.connect;
