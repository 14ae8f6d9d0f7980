/**
 * The peer comparison: a load generator ({@link dev.sallyport.benchmarks.peers.LoadGen}, start here) that drives
 * HTTPS through a direct connection or an HTTP proxy (CONNECT, then TLS with SNI per host name), for
 * {@code benchmarks/peers/run.sh}, which starts Sallyport with {@code bin/sallyport proxy --config}. Nothing here
 * runs in the test suite.
 */
package dev.sallyport.benchmarks.peers;
