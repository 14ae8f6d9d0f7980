/**
 * WebSocket frames on an intercepted connection after its {@code 101}: {@link
 * dev.sallyport.proxy.websocket.MessageScrubHandler} (server to client: every real value scrubbed per message,
 * frames written again) and {@link dev.sallyport.proxy.websocket.MessageGuardHandler} (client to server: each
 * message checked like a request body, the WebSocket closed with 1008 on a refusal). Both read frames with {@code
 * FrameReader}, which streams payloads and refuses what it cannot read (extensions, wrong masking, broken
 * fragmentation) with 1002. {@code exchange.WebSocketStage} installs them; proxy-core/SECRETS.md describes the rules.
 */
package dev.sallyport.proxy.websocket;
