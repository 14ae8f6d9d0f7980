/**
 * The HTTP/2 front end of the exchange core, for intercepted tunnels whose client chose {@code h2} in ALPN: the
 * connection's codec and limits ({@link Http2Connections}; {@link Http2FrameGuard} for the ones the codec lacks), one
 * {@link Http2StreamFrontend} per stream, and the pure reading of a stream's request head ({@link Http2Requests}).
 * Deciding, dialing, secrets, scrubbing and audit are the core's, as for HTTP/1.1.
 */
package dev.sallyport.proxy.http2;
