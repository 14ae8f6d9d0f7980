/**
 * How the process sandbox is built; other modules must not use these types.
 *
 * <p>Host side: {@link dev.sallyport.sandbox.internal.BwrapCommand} (namespaces and mounts),
 * {@link dev.sallyport.sandbox.internal.ProtectedPaths} (what inside the workspace stays read-only),
 * {@link dev.sallyport.sandbox.internal.SeccompFilter} (the BPF program, assembled by
 * {@link dev.sallyport.sandbox.internal.Bpf}), {@link dev.sallyport.sandbox.internal.SandboxEnvironment},
 * {@link dev.sallyport.sandbox.internal.TrustFiles} and {@link dev.sallyport.sandbox.internal.ProxyRelay} (Unix
 * socket to the proxy). Inside: {@link dev.sallyport.sandbox.internal.Inside} (the entry point bwrap runs),
 * {@link dev.sallyport.sandbox.internal.Forwarder} and {@link dev.sallyport.sandbox.internal.Landlock} (through
 * {@code java.lang.foreign}). {@link dev.sallyport.sandbox.internal.Launch} carries the plan from one side to
 * the other.
 */
package dev.sallyport.sandbox.internal;
