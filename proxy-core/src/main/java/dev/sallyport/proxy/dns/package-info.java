/**
 * The proxy's own DNS stub: names some rule could allow get a synthetic address (mapped back to the name while
 * the mapping lives), every other name NXDOMAIN, and no query ever goes to a real resolver. Start from
 * {@link dev.sallyport.proxy.dns.DnsStub} (the answers), then {@link dev.sallyport.proxy.dns.SyntheticAddresses}
 * (the bounded mapping) and {@link dev.sallyport.proxy.dns.DnsServer} (UDP and TCP listeners).
 */
package dev.sallyport.proxy.dns;
