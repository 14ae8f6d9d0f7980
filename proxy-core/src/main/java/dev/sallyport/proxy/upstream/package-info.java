/**
 * The way out: resolve through the injectable resolver, check every address against {@code network.deny}, dial
 * exactly the address that passed (or, with {@code upstream.proxy}, the parent proxy, whose {@code CONNECT}
 * tunnel {@link dev.sallyport.proxy.upstream.ParentConnectHandler} opens), TLS with hostname verification against
 * {@code upstream.trust}, and a keep-alive pool per destination. Start with
 * {@link dev.sallyport.proxy.upstream.UpstreamConnector}.
 */
package dev.sallyport.proxy.upstream;
