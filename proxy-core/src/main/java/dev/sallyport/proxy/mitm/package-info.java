/**
 * What happens inside a CONNECT tunnel before HTTP: refuse non-TLS bytes ({@link dev.sallyport.proxy.mitm.TlsRecordCheck}),
 * check that the SNI names the CONNECT target and present a minted certificate chosen asynchronously
 * ({@link dev.sallyport.proxy.mitm.MintingMapping}, start here), then hand over to the HTTP phase
 * ({@link dev.sallyport.proxy.mitm.InterceptHandshakeHandler}); or, for {@code tls: passthrough}, check the
 * SNI of the ClientHello and relay bytes untouched ({@link dev.sallyport.proxy.mitm.PassthroughHandler}).
 */
package dev.sallyport.proxy.mitm;
