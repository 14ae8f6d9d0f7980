/**
 * Sallyport's policy: the policy file's records ({@link dev.sallyport.policy.Policy}, read by
 * {@link dev.sallyport.policy.PolicyLoader}) and the decisions made from it
 * ({@link dev.sallyport.policy.PolicyEngine}: onConnect, onRequest, onDial). Start with PolicyEngine.
 * Host, address and path normalization ({@link dev.sallyport.policy.HostNames},
 * {@link dev.sallyport.policy.IpAddress}, {@link dev.sallyport.policy.PathNormalizer}) are public because
 * the proxy must check with the same rules it matches with. Knows nothing of Netty.
 */
package dev.sallyport.policy;
