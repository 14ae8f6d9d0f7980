/**
 * How the process sandbox is built; other modules must not use these types (the VM backend in this module uses the
 * environment and trust-file builders, and its gateway relay the relays below).
 *
 * <p>Host side: {@link dev.sallyport.sandbox.internal.BwrapCommand} (namespaces and mounts),
 * {@link dev.sallyport.sandbox.internal.ProtectedPaths} (the names inside the workspace the host obeys later, found by
 * {@link dev.sallyport.sandbox.internal.WorkspaceScan}, checked again by
 * {@link dev.sallyport.sandbox.internal.AfterRunCheck}), {@link dev.sallyport.sandbox.internal.Cgroups} and
 * {@link dev.sallyport.sandbox.internal.LimitEnforcement} (memory and task limits),
 * {@link dev.sallyport.sandbox.internal.Launcher} (the shell that joins the cgroup and the inotify share before
 * bwrap), {@link dev.sallyport.sandbox.internal.SeccompFilter} (the BPF programs, assembled by
 * {@link dev.sallyport.sandbox.internal.Bpf}), {@link dev.sallyport.sandbox.internal.SandboxEnvironment} and
 * {@link dev.sallyport.sandbox.internal.TrustFiles} (the environment and trust files of both backends, the VM's
 * too), and {@link dev.sallyport.sandbox.internal.HostLink}: where the
 * setup hands over the sandbox's listening socket, which {@link dev.sallyport.sandbox.internal.ProxyRelay} relays
 * to the proxy (on {@link dev.sallyport.sandbox.internal.StreamRelay} and {@link dev.sallyport.sandbox.internal.Pump},
 * as the VM gateway's relay does; DNS over UDP through {@link dev.sallyport.sandbox.internal.DnsDatagramRelay}), and
 * its seccomp listener, on which {@link dev.sallyport.sandbox.internal.ConnectSupervisor}
 * answers every connect of the command; {@link dev.sallyport.sandbox.internal.HostSockets} and
 * {@link dev.sallyport.sandbox.internal.ProcMasks} (what is covered),
 * {@link dev.sallyport.sandbox.internal.WorkloadUser} and {@link dev.sallyport.sandbox.internal.RootDrop} (the uid
 * the command runs as, never root) and {@link dev.sallyport.sandbox.internal.HostAccounts} (its passwd and group).
 * Inside: {@link dev.sallyport.sandbox.internal.Inside} (the entry point bwrap runs, gone once the command runs:
 * {@link dev.sallyport.sandbox.internal.Exec}), {@link dev.sallyport.sandbox.internal.Landlock} and
 * {@link dev.sallyport.sandbox.internal.ProcessRlimits}. System calls go through
 * {@link dev.sallyport.sandbox.internal.Syscalls} ({@code java.lang.foreign}, no JNI).
 * {@link dev.sallyport.sandbox.internal.Launch} carries the plan from one side to the other.
 */
package dev.sallyport.sandbox.internal;
