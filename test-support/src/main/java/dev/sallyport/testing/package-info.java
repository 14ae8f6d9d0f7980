/**
 * Shared test fixtures for every Sallyport module's tests: real TLS material and real processes, no mocks.
 *
 * <ul>
 *   <li>{@link dev.sallyport.testing.TestPki}: a fresh root CA per run and server certificates for DNS names or
 *       IP literals (for upstream servers; not Sallyport's product CA). Start here.</li>
 *   <li>{@link dev.sallyport.testing.TlsTestServer}: an HTTPS server on {@code 127.0.0.1:0} (JDK
 *       {@code SSLServerSocket}) that presents a given key and chain and answers every request with
 *       {@code 200 OK} and a body; records SNI names and request heads.</li>
 *   <li>{@link dev.sallyport.testing.ExternalProcess}: runs curl, openssl etc. with a timeout, draining
 *       stdout/stderr concurrently and killing the whole process tree on timeout.</li>
 * </ul>
 */
package dev.sallyport.testing;
