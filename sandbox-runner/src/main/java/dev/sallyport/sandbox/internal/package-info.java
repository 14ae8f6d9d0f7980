/**
 * How the process sandbox is built; other modules must not use these types.
 *
 * <p>Host side: {@link dev.sallyport.sandbox.internal.BwrapCommand} (namespaces and mounts),
 * {@link dev.sallyport.sandbox.internal.ProtectedPaths} (the names inside the workspace the host obeys later, found by
 * {@link dev.sallyport.sandbox.internal.WorkspaceScan}, checked again by
 * {@link dev.sallyport.sandbox.internal.AfterRunCheck}), {@link dev.sallyport.sandbox.internal.Cgroups} and
 * {@link dev.sallyport.sandbox.internal.LimitEnforcement} (memory and task limits),
 * {@link dev.sallyport.sandbox.internal.Launcher} (the shell that joins the cgroup and the inotify share before
 * bwrap),
 * {@link dev.sallyport.sandbox.internal.SeccompFilter} (the BPF program, assembled by
 * {@link dev.sallyport.sandbox.internal.Bpf}), {@link dev.sallyport.sandbox.internal.SandboxEnvironment},
 * {@link dev.sallyport.sandbox.internal.TrustFiles} and {@link dev.sallyport.sandbox.internal.ProxyRelay} (Unix
 * socket to the proxy). Inside: {@link dev.sallyport.sandbox.internal.Inside} (the entry point bwrap runs),
 * {@link dev.sallyport.sandbox.internal.Forwarder}, {@link dev.sallyport.sandbox.internal.Landlock} and
 * {@link dev.sallyport.sandbox.internal.ProcessRlimits} (through {@code java.lang.foreign}). {@link dev.sallyport.sandbox.internal.Launch} carries the plan from one side to
 * the other.
 */
package dev.sallyport.sandbox.internal;
