/**
 * The HTTP/1.1 phase of a client connection, plain or inside an intercepted tunnel: strict framing
 * ({@link dev.sallyport.proxy.http.HttpFramingGuard}), the per-request decision
 * ({@link dev.sallyport.proxy.http.RequestGate}), and forwarding with streamed bodies. Start with
 * {@link dev.sallyport.proxy.http.HttpPhase}, then {@link dev.sallyport.proxy.http.FrontendHandler}.
 * {@link dev.sallyport.proxy.http.SecretsStep} applies the secrets to each exchange (placeholders in,
 * request bodies checked, responses scrubbed); after a WebSocket {@code 101},
 * {@link dev.sallyport.proxy.http.WebSocketRelay} hands both connections to {@code proxy.websocket}.
 */
package dev.sallyport.proxy.http;
