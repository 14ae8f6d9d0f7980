/**
 * Per-sandbox identities on a shared proxy: {@link dev.sallyport.proxy.identity.SandboxRegistry} holds the sandboxes
 * their runners registered through the admin listener (identity, the policy name its rules and secrets match, its
 * own rules, a lease, a token the runner's relay hands the proxy on every connection), and
 * {@link dev.sallyport.proxy.identity.ClientIdentity} is what a connection carries: a registered sandbox or
 * {@code anonymous}. Start reading from {@code SandboxRegistry}.
 */
package dev.sallyport.proxy.identity;
