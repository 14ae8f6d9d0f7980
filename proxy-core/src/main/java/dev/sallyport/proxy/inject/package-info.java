/**
 * Secrets: the sandbox holds placeholders, the proxy swaps in real values only on requests to the
 * secret's hosts and only in its listed headers, refuses misuse, and scrubs the values from everything
 * that comes back. Start with {@link dev.sallyport.proxy.inject.SecretStore} (built from the policy),
 * then {@link dev.sallyport.proxy.inject.ExchangeSecrets} (per request: inject, body guard, response
 * scrubber) and {@link dev.sallyport.proxy.inject.Placeholders} (what the sandbox gets).
 * {@code reload.PolicyHolder} swaps the store with the policy, as one snapshot, on reload, and
 * {@code KnownValues} every value loaded so far (responses stay scrubbed of values a reload removed).
 * proxy-core/SECRETS.md explains the model and how the data path calls these types.
 */
package dev.sallyport.proxy.inject;
