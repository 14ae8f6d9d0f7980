/**
 * Upstream servers for tests that look at what comes back. Start with
 * {@link dev.sallyport.testing.upstream.ReflectingUpstream}: an HTTPS server that sends each request's head
 * back in its response headers and body, one byte per chunk, optionally gzip-compressed.
 */
package dev.sallyport.testing.upstream;
