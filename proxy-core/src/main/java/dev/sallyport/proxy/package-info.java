/**
 * Sallyport's egress proxy: start with {@link dev.sallyport.proxy.SallyportProxy} and
 * {@link dev.sallyport.proxy.ProxyOptions}; {@link dev.sallyport.proxy.Resolver} is the DNS seam tests use.
 * The data path lives in {@code connect}, {@code mitm}, {@code http} and {@code upstream}.
 */
package dev.sallyport.proxy;
