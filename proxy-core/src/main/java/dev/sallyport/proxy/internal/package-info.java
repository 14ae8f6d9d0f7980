/**
 * What the data-path packages share and other modules must not touch: the per-proxy runtime
 * ({@link dev.sallyport.proxy.internal.ProxyContext}, start here), the audit-field builder and the transport choice.
 */
package dev.sallyport.proxy.internal;
