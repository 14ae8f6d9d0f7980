/**
 * Per-client limits: who a connection or tunnel counts against ({@link dev.sallyport.proxy.limits.ClientKey},
 * start here: an IPv4 address or an IPv6 /64) and the slots each client holds against its limit
 * ({@link dev.sallyport.proxy.limits.ClientSlots}, one WARN line per episode of refusals).
 */
package dev.sallyport.proxy.limits;
