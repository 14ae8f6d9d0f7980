/**
 * WebSocket frames on an intercepted connection after its {@code 101}: {@link
 * dev.sallyport.proxy.websocket.MessageScrubHandler} (server to client: every real value scrubbed per message,
 * frames written again). It reads frames with {@code FrameReader}, which streams payloads and refuses what it
 * cannot read (extensions, wrong masking, broken fragmentation) with 1002. {@code http.WebSocketRelay} installs it;
 * proxy-core/SECRETS.md describes the rules.
 */
package dev.sallyport.proxy.websocket;
