/**
 * The HTTP/1.1 front end of the exchange core, plain or inside an intercepted tunnel: strict framing
 * ({@link dev.sallyport.proxy.http.HttpFramingGuard} with {@link dev.sallyport.proxy.http.HeadScanner}), the
 * request head read into an exchange request ({@link dev.sallyport.proxy.http.Http1Requests}), and the connection
 * (keep-alive, pipelining, refusals) in {@link dev.sallyport.proxy.http.FrontendHandler}, which is where to start.
 * Deciding, dialing, secrets, relaying and recording are the core's ({@code proxy.exchange}).
 */
package dev.sallyport.proxy.http;
