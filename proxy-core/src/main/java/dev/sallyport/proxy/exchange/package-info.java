/**
 * The exchange core: every front end (HTTP/1.1 today, plain and in tunnels) hands it an
 * {@link dev.sallyport.proxy.exchange.ExchangeRequest} and a {@link dev.sallyport.proxy.exchange.Downstream}, and
 * the core alone decides ({@code RequestDecision}), injects ({@code SecretsStage}), dials and checks the dialed
 * address, admits the decision to the audit log, relays, scrubs and records, in that order, whatever the protocol.
 * Start with {@link dev.sallyport.proxy.exchange.ExchangeCore}, then {@link dev.sallyport.proxy.exchange.Exchange}
 * (one exchange's state) and {@code ResponseFlow} (its response).
 */
package dev.sallyport.proxy.exchange;
