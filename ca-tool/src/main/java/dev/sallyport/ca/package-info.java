/**
 * Sallyport's certificate authority: creating and loading the CA, minting per-host leaf certificates for TLS
 * interception, and exporting the CA certificate for clients to trust. Knows nothing of Netty.
 *
 * <p>Start with {@link dev.sallyport.ca.CertificateAuthority} (init, load, loadOrInit, ephemeral), then
 * {@link dev.sallyport.ca.LeafMinter} (the cached, asynchronous minting the proxy calls from its SNI handler) and
 * {@link dev.sallyport.ca.CaExport}. Errors are {@link dev.sallyport.ca.CaException} with one-line messages.
 * Code under {@code dev.sallyport.ca.internal} is not for other modules.
 */
package dev.sallyport.ca;
