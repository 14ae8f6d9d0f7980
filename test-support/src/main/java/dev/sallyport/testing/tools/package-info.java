/**
 * Upstreams that real tools talk to, for the tests that run those tools inside {@code sallyport run}: start
 * with {@link dev.sallyport.testing.tools.HttpsSite}, an HTTPS server on loopback that records every request,
 * then mount what the tool expects on it: {@link dev.sallyport.testing.tools.GitHttpBackend} (git's smart HTTP
 * protocol), {@link dev.sallyport.testing.tools.PythonIndex} (pip's simple index),
 * {@link dev.sallyport.testing.tools.StaticFolder} (a Maven repository, plain files) and
 * {@link dev.sallyport.testing.tools.ChatStream} (an LLM host's streaming chat endpoint). npm's registry is
 * {@link dev.sallyport.testing.upstream.NpmRegistry}, a server of its own.
 */
package dev.sallyport.testing.tools;
