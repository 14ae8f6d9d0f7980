/**
 * The peer comparison: a load generator ({@link dev.sallyport.benchmarks.peers.LoadGen}, start here) that drives
 * HTTPS through a direct connection or an HTTP proxy (CONNECT, then TLS with SNI per host name), and
 * {@link dev.sallyport.benchmarks.peers.RunProxy}, which starts Sallyport from a policy file for
 * {@code benchmarks/peers/run.sh}. Nothing here runs in the test suite.
 */
package dev.sallyport.benchmarks.peers;
