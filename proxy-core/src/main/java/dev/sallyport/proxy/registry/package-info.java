/**
 * Package registries seen as what they are (what a request asks for is the policy's
 * {@link dev.sallyport.policy.RegistryRequest}): filtering package documents by the policy's
 * {@code registries:} rules ({@link dev.sallyport.proxy.registry.NpmDocument},
 * {@link dev.sallyport.proxy.registry.SimpleIndex}), remembering the verdicts for the files asked for later
 * ({@link dev.sallyport.proxy.registry.VerdictCache}) and the words of a refusal
 * ({@link dev.sallyport.proxy.registry.Refusals}). No Netty here: the exchange core's registry stage drives it.
 */
package dev.sallyport.proxy.registry;
