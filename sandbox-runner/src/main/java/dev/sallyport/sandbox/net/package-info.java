/**
 * The per-sandbox network of the VM backend, enforced on the host: a bridge whose only reachable endpoint is
 * the proxy on the bridge's gateway address, and an nftables table of our own that drops forwarding to and from
 * the bridge and rejects every other input from it.
 *
 * <p>Start with {@link dev.sallyport.sandbox.net.SandboxNetwork} (names, addresses and the host commands that build
 * and remove one network), then {@link dev.sallyport.sandbox.net.NftRuleset} (the table itself),
 * {@link dev.sallyport.sandbox.net.CniConflist} (the guest's routes, added to nerdctl's conflist) and
 * {@link dev.sallyport.sandbox.net.SandboxCleanup} (what {@code sallyport cleanup} removes after a crash).
 * Host commands run through {@link dev.sallyport.sandbox.net.CommandRunner}: {@link dev.sallyport.sandbox.net.HostShell}
 * runs them, {@link dev.sallyport.sandbox.net.DryRun} only prints them.
 */
package dev.sallyport.sandbox.net;
