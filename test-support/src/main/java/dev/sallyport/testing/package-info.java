/**
 * Shared test fixtures for every Sallyport module's tests: real TLS material and real processes, no mocks.
 *
 * <ul>
 *   <li>{@link dev.sallyport.testing.TestPki}: a fresh root CA per run and server certificates for DNS names or
 *       IP literals (for upstream servers; not Sallyport's product CA). Start here.</li>
 *   <li>{@link dev.sallyport.testing.TlsTestServer}: an HTTPS server on {@code 127.0.0.1:0} (JDK
 *       {@code SSLServerSocket}) that presents a given key and chain and answers every request with
 *       {@code 200 OK} and a body; records SNI names and request heads. {@link dev.sallyport.testing.TestServerSockets}
 *       builds the server side's socket and TLS context for every test server.</li>
 *   <li>{@link dev.sallyport.testing.Trust}: the client side's TLS context and trust manager, trusting only the
 *       certificates a test names.</li>
 *   <li>{@link dev.sallyport.testing.ExternalProcess}: runs curl, openssl etc. with a timeout, draining
 *       stdout/stderr concurrently and killing the whole process tree on timeout.</li>
 *   <li>{@link dev.sallyport.testing.Await}: waits for another thread's work with a deadline, never a sleep.</li>
 *   <li>{@link dev.sallyport.testing.LeakCheck}: a JUnit extension that fails a class on a leaked Netty buffer.</li>
 *   <li>{@link dev.sallyport.testing.Prerequisites}: what a test needs from the machine; skipped when missing,
 *       failed under {@code CI=true}.</li>
 * </ul>
 */
package dev.sallyport.testing;
